module github.com/rotd/coordination/cmd/coordbench

go 1.26.0

require (
	github.com/gofrs/flock v0.13.1
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/rotd/coordination v0.0.0-00010101000000-000000000000
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

replace github.com/rotd/coordination => ../..
