module reasonix

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
