-- Campaign analytics (issue 20 "Analytics"; src/bulk/analytics/): a campaign's complaints and
-- unsubscribes are the address facts that name it (`contact_engagement.campaign_id`, written by
-- src/bulk/contacts/engagement.ts), counted per campaign and by event time for the rates. Those
-- facts are kept for ever (only opens and clicks are pruned), so the counts never go stale.
CREATE INDEX contact_engagement_campaign ON contact_engagement (campaign_id, type, at) WHERE campaign_id IS NOT NULL;
