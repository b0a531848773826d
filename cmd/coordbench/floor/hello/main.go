// Command hello is the floor of a process start for coordbench -floor: a
// Go program that prints one line of JSON and exits. It links only the
// runtime, os and encoding/json, so what a coord process costs beyond it
// is coord's own (its packages' size and initialisation, its work).
package main

import (
	"encoding/json"
	"os"
)

func main() {
	json.NewEncoder(os.Stdout).Encode(map[string]string{"status": "ok"})
}
