package main

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"
