package cli

// Stamped at build time with -ldflags "-X
// github.com/comptoir-pos/comptoir/backend/cli.version=... (and .commit,
// .buildTime)" (scripts/lib.sh, scripts/dist).
var (
	version   = "dev"
	commit    = ""
	buildTime = ""
)

// versionString is what `comptoir --version` prints and the staff screen shows.
func versionString() string {
	s := "comptoir " + version
	if commit != "" {
		s += " (" + commit
		if buildTime != "" {
			s += ", built " + buildTime
		}
		s += ")"
	}
	return s
}
