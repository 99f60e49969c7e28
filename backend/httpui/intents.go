package httpui

import "github.com/comptoir-pos/comptoir/backend/kiosk"

// Intents lists the intents served: the kiosk's table (kiosk/intents.go),
// for tests and documentation.
func Intents() []string { return kiosk.IntentNames() }
