package fiscal

// The login keychain keeps the signing key by default.
const systemKeyringName = "the macOS Keychain"
