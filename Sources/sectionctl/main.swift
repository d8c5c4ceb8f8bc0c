import SectionCtl

Tool.main(Array(CommandLine.arguments.dropFirst()))
