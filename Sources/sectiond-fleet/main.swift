import Glibc
import SectionFleet
import SectionServer

// sectiond with the fleet (--etcd): what `sectiond --etcd` execs (SectionServer's FleetBinary).
exit(Daemon.main(Array(CommandLine.arguments.dropFirst()), fleet: Fleet.init(options:server:)))
