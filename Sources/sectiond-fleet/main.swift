import Glibc
import Posix
import SectionFleet
import SectionServer

// sectiond with the fleet (--etcd): what `sectiond --etcd` execs (SectionServer's FleetBinary),
// which marks the exec so that a plain sectiond installed under this name is found out.
ProcessInfo.setEnvironment(FleetBinary.marker, nil)
exit(Daemon.main(Array(CommandLine.arguments.dropFirst()), fleet: Fleet.init(options:server:)))
