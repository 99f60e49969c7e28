// Package fiscal keeps the records a tax inspector trusts: every sale and
// every credit (refund, reversal) as a ticket written once, numbered
// without gaps, and signed; technical events (start, stop, settings
// changes) the same way. Each kind of record is a chain: a record's
// signature covers its content and the signature of the record before it,
// so a record changed, removed, inserted or moved breaks the chain at that
// point, and Verify names it.
//
// Signatures are Ed25519 (Go's standard library) with a key pair made when
// the data directory first needs one; the private key is kept outside the
// data directory where the system offers it (KeyStore), else beside it
// (0600); the public key is exported at installation and printed on every
// closing, so that anyone can check the records without the private key,
// and with a key that did not come from the PC. Head fingerprints
// (HeadFingerprint) printed on receipts and closings pin the chains up to
// them against their own key's holder.
//
// What is signed, byte for byte (SignedBytes):
//
//	comptoir-fiscal-1 LF kind LF seq LF at (Unix ms) LF source LF prev_sig LF hex(SHA-256(payload))
//
// The payload is canonical JSON (Go's encoding of the record's struct:
// fields in a fixed order, no insignificant space).
package fiscal
