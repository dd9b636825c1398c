// Command mcp-client is the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk) against
// the gateway's /mcp, for test/integration/mcp-interop.test.ts to judge: it connects with an agent
// key as a bearer header, lists the tools, calls each tool given on the command line, and prints
// one JSON line per step on stdout.
//
// usage: MCP_BEARER_TOKEN=osk_… [MCP_PROTOCOL_VERSION=2025-11-25] mcp-client <mcp url> [<tool> <json arguments>]…
//
// The token comes from the environment, not argv, so it does not show in process listings.
// MCP_PROTOCOL_VERSION is the revision the SDK asks for first (its default: its latest).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the Authorization header to every request the SDK's transport sends.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

func emit(step string, fields map[string]any) {
	fields["step"] = step
	line, err := json.Marshal(fields)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mcp-client:", err)
	os.Exit(1)
}

func main() {
	args := os.Args[1:]
	token := os.Getenv("MCP_BEARER_TOKEN")
	if len(args) < 1 || len(args)%2 != 1 || token == "" {
		fail(fmt.Errorf("usage: MCP_BEARER_TOKEN=… mcp-client <mcp url> [<tool> <json arguments>]…"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	transport := &mcp.StreamableClientTransport{
		Endpoint:   args[0],
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
		// One answer per request is all this client reads; no standalone GET stream.
		DisableStandaloneSSE: true,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test-go-sdk", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: os.Getenv("MCP_PROTOCOL_VERSION")})
	if err != nil {
		fail(fmt.Errorf("connect: %w", err))
	}
	defer session.Close()

	init := session.InitializeResult()
	server := ""
	if init.ServerInfo != nil {
		server = init.ServerInfo.Name
	}
	emit("connected", map[string]any{"protocol_version": init.ProtocolVersion, "server": server})

	names := []string{}
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			fail(fmt.Errorf("tools/list: %w", err))
		}
		names = append(names, tool.Name)
	}
	emit("tools", map[string]any{"names": names})

	for i := 1; i < len(args); i += 2 {
		var arguments map[string]any
		if err := json.Unmarshal([]byte(args[i+1]), &arguments); err != nil {
			fail(fmt.Errorf("arguments of %s: %w", args[i], err))
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: args[i], Arguments: arguments})
		if err != nil {
			fail(fmt.Errorf("tools/call %s: %w", args[i], err))
		}
		emit("call", map[string]any{"tool": args[i], "is_error": res.IsError, "structured": res.StructuredContent})
	}
}
