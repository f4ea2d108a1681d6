package pagerduty

import "github.com/askbridge/askbridge/domain"

// The responders fields that admit whoever is on call (Resolver).
const (
	KindSchedules = "pagerduty_schedules"
	KindPolicies  = "pagerduty_escalation_policies"
)

// Pager is the name of PagerDuty in a route's page settings and in the
// events of its deliveries ("pagerduty.trigger").
const Pager = "pagerduty"

func init() {
	domain.RegisterDirectoryGroup(domain.DirectoryGroup{Kind: KindSchedules, Noun: "whoever is on call for PagerDuty schedule"})
	domain.RegisterDirectoryGroup(domain.DirectoryGroup{Kind: KindPolicies, Noun: "whoever is on call for PagerDuty escalation policy"})
}
