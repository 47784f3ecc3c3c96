package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
)

// sdNotify sends state to the service manager when one asked for it
// ($NOTIFY_SOCKET, set by systemd for Type=notify units), so systemd
// counts the unit as started only once the service listens, and knows a
// stop is under way while it drains. Without the variable it does
// nothing. The protocol is one datagram of newline-separated KEY=VALUE
// lines; a leading '@' names an abstract socket.
func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if path[0] == '@' {
		path = "\x00" + path[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notifying the service manager: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("notifying the service manager: %w", err)
	}
	return nil
}

// notifyManager is sdNotify for serve: a failure is logged, never fatal,
// because the service itself works either way.
func notifyManager(log *slog.Logger, state string) {
	if err := sdNotify(state); err != nil {
		log.Warn("systemd notification failed", "err", err)
	}
}
