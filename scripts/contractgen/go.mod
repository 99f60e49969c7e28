module github.com/comptoir-pos/comptoir/scripts/contractgen

go 1.26

require github.com/coder/guts v1.6.1

require (
	github.com/dlclark/regexp2 v1.11.4 // indirect
	github.com/dop251/goja v0.0.0-20241024094426-79f3a7efcdbd // indirect
	github.com/fatih/structtag v1.2.0 // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/pprof v0.0.0-20230207041349-798e818bf904 // indirect
	golang.org/x/mod v0.27.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/tools v0.36.0
	golang.org/x/xerrors v0.0.0-20240903120638-7835f813f4da // indirect
)
