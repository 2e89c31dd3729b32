package protocols

import "fmt"

// What the person is shown of an agent's discovery.report and escalations,
// by either engine.

// Shown is a discovery.report's body as the person sees it.
func (b DiscoveryReport) Shown() map[string]any {
	body := map[string]any{"summary": b.Summary}
	if b.Body != nil {
		body["body"] = b.Body
	}
	return body
}

// What says what an escalation.conflict is about.
func (b EscalationConflict) What() string {
	what := fmt.Sprintf("%s conflict", b.ConflictType)
	if b.ResourceInQuestion != "" {
		what += " over " + b.ResourceInQuestion
	}
	if b.Reason != "" {
		what += ": " + b.Reason
	}
	return what
}

// EscalationShown is an escalation as the person sees it: its severity
// (medium when the agent gave none), what it is about and its detail.
func EscalationShown(severity, what string, detail any) map[string]any {
	if severity == "" {
		severity = "medium"
	}
	body := map[string]any{"severity": severity, "error": what}
	if detail != nil {
		body["detail"] = detail
	}
	return body
}
