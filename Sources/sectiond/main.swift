import Glibc
import SectionServer

exit(Daemon.main(Array(CommandLine.arguments.dropFirst())))
