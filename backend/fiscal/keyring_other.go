//go:build !windows && !darwin

package fiscal

// No keyring by default: on Linux the Secret Service is used only when
// asked for (a kiosk may run where none is unlocked), and a root-owned
// folder is used as root.
const systemKeyringName = ""
