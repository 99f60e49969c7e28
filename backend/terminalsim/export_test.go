package terminalsim

// HostIPs is hostIPs, for the tests of package terminalsim_test: those
// that use the tests' environment, which imports this package.
var HostIPs = hostIPs
