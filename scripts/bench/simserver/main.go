// Command simserver is the simulated terminal answering at once, in a
// process of its own, for make bench's soak: every wait scaled by 1e-9, the
// card-read and screens windows and the request hold made very long so that
// they never race the customer's (scaled) delay. Scripted through its
// control API (/sim/script, /sim/ledger). Prints "Simulated terminal at URL"
// and runs until SIGTERM or SIGINT.
//
//	go run ./scripts/bench/simserver [-addr 127.0.0.1:0]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	long := 10000 * time.Hour
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 1e-9, NoTestAmounts: true,
		Timings: terminalsim.Timings{Screens: long, CardRead: long, RequestHold: long}})
	if err != nil {
		log.Fatal(err)
	}
	if err := sim.Start(*addr); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Simulated terminal at %s\n", sim.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	sim.Close()
}
