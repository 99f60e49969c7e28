package fiscal

// The Windows Credential Manager keeps the signing key by default.
const systemKeyringName = "the Windows Credential Manager"
