package settings

import "testing"

// A prefix that could make two numbers alike (a digit last: "1" then 12
// reads 112) or is too long is refused, and numbers go without one.
func TestNumberPrefixChecked(t *testing.T) {
	for _, p := range []string{"1", "ABCD", "a", "A-", "B"} {
		v := p
		err := checkNumberPrefix(&v)
		if (p == "B") != (err == nil) || (err != nil && v != "") {
			t.Errorf("prefix %q: %v, kept %q", p, err, v)
		}
	}
}
