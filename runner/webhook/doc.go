// Package webhook is the signed-webhook intake: POST /hooks/<name> for each
// [[webhooks]] entry. A delivery's body is read within the service's
// intake budget (internal/intakebudget) and verified as it is read, before
// anything of it is parsed (GitHub's X-Hub-Signature-256, or Standard
// Webhooks headers for kind "hmac"), matched against the entry's events and filter, rendered through
// its prompt template into a delimited block of untrusted data, and
// submitted as a task whose requester is webhook:<name> and whose posture
// is the entry's — the payload can change neither. Redeliveries and
// replays return the first task. Every delivery, accepted or not, is
// recorded (without body or signature) for `reasonix webhooks list`.
package webhook
