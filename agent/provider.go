package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Provider streams model responses. Stream returns an error only when the
// request could not be started; failures after that arrive as a ChunkError.
// The returned channel is closed after the final chunk and when ctx ends.
// Implementations must be safe for concurrent use.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request) (<-chan Chunk, error)
}

// ProviderConfig is one resolved provider instance from configuration.
// APIKey is the secret itself, already read from the environment; providers
// must never put it in errors or logs.
type ProviderConfig struct {
	Name          string        // instance name, e.g. "deepseek"
	Kind          string        // registry kind, e.g. "openai"
	BaseURL       string        // e.g. "https://api.example.com/v1"
	RequestURL    string        // exact request target; overrides BaseURL when set
	Model         string        // the model requests use unless Request.Model is set
	APIKey        string        // may be empty for endpoints without auth
	ContextWindow int           // tokens; 0 = unknown
	IdleTimeout   time.Duration // stream idle watchdog; 0 = the provider's default
	MaxRetries    int           // retries of retryable failures; 0 = the provider's default, <0 = none
	// MaxOutputBytes bounds one answer's text plus tool-call ids, names and
	// arguments; MaxStreamBytes bounds the raw response body. 0 = the
	// provider's default. Exceeding either fails with ErrOutputTooLarge.
	MaxOutputBytes int
	MaxStreamBytes int
}

// ProviderFactory builds a Provider from its configuration, validating it.
type ProviderFactory func(cfg ProviderConfig) (Provider, error)

// ProviderRegistry maps provider kinds to factories. The zero value is not
// usable; use NewProviderRegistry. It is safe for concurrent use.
type ProviderRegistry struct {
	mu        sync.RWMutex
	factories map[string]ProviderFactory
}

// NewProviderRegistry returns an empty registry, e.g. for a test.
func NewProviderRegistry() *ProviderRegistry {
	return &ProviderRegistry{factories: map[string]ProviderFactory{}}
}

// Providers is the process-wide registry that built-in providers join from
// their init functions.
var Providers = NewProviderRegistry()

// RegisterProvider adds a factory to Providers. It is meant for init functions
// and panics on a duplicate kind, which is a programming error.
func RegisterProvider(kind string, f ProviderFactory) { Providers.Register(kind, f) }

// Register adds f under kind. It panics when kind is empty or already taken.
func (r *ProviderRegistry) Register(kind string, f ProviderFactory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if kind == "" || f == nil {
		panic("agent: provider kind and factory are required")
	}
	if _, dup := r.factories[kind]; dup {
		panic(fmt.Sprintf("agent: provider kind %q registered twice", kind))
	}
	r.factories[kind] = f
}

// Kinds lists the registered kinds in sorted order.
func (r *ProviderRegistry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	kinds := make([]string, 0, len(r.factories))
	for k := range r.factories {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// New builds a provider of cfg.Kind. An unknown kind is an error that lists
// the known ones.
func (r *ProviderRegistry) New(cfg ProviderConfig) (Provider, error) {
	r.mu.RLock()
	f, ok := r.factories[cfg.Kind]
	r.mu.RUnlock()
	if !ok {
		known := r.Kinds()
		if len(known) == 0 {
			return nil, fmt.Errorf("agent: unknown provider kind %q (no kinds are registered)", cfg.Kind)
		}
		return nil, fmt.Errorf("agent: unknown provider kind %q for provider %q (known kinds: %s)",
			cfg.Kind, cfg.Name, strings.Join(known, ", "))
	}
	p, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("agent: provider %q: %w", cfg.Name, err)
	}
	return p, nil
}

type retryKey struct{}

// ContextWithRetryReporter returns ctx carrying report, which a provider
// calls (through ReportRetry) each time it waits to repeat a failed request,
// so a run can say why it is slow instead of going quiet.
func ContextWithRetryReporter(ctx context.Context, report func(text string)) context.Context {
	return context.WithValue(ctx, retryKey{}, report)
}

// ReportRetry tells the run in ctx, if it listens, that the provider will
// repeat a request and why.
func ReportRetry(ctx context.Context, text string) {
	if report, ok := ctx.Value(retryKey{}).(func(string)); ok {
		report(text)
	}
}
