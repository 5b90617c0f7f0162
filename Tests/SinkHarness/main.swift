#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// SinkHarness write|pst ...: drives the output writers for the Python reader checks (Tests/python).
exit(runSinkHarness(Array(CommandLine.arguments.dropFirst())))
