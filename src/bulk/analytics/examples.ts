/** The reference's errors and examples for the bulk analytics (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AnalyticsGroup } from "./Api.ts"

const TOO_EXPENSIVE = "422 `query_too_expensive` when the read runs past the statement timeout."
const rates = { open: 0.4125, ctr: 0.0875, ctor: 0.2121, bounce: 0.01, complaint: 0.0008, unsub: 0.0025 }

export const analyticsReference: GroupReference<typeof AnalyticsGroup> = {
  campaign: {
    errors: `404 \`not_found\` when this key has no campaign \`{id}\`; ${TOO_EXPENSIVE}`,
    response: {
      campaign_id: "cp_6tV1nB8mK3qW5xZ2pL9d",
      delivered: 1200,
      opens_unique: 495,
      opens_total: 730,
      clicks_unique: 105,
      clicks_total: 160,
      bounces: 12,
      complaints: 1,
      unsubs: 3,
      rates,
      top_links: [{ url: "https://example.org/offer", clicks_unique: 80, clicks_total: 121 }],
      timeline: [
        { at: "2026-11-04T09:00:00.000Z", delivered: 1180, opens: 310, clicks: 70 },
        { at: "2026-11-04T10:00:00.000Z", delivered: 20, opens: 185, clicks: 35 }
      ],
      detail_window_days: 90,
      variants: [
        { index: 0, subject: "November news", sent: 60, opens_unique: 21, clicks_unique: 4, open_rate: 0.35, click_rate: 0.0667 },
        { index: 1, subject: "What is new this month", sent: 1140, opens_unique: 474, clicks_unique: 101, open_rate: 0.4158, click_rate: 0.0886 }
      ],
      winner: 1
    }
  },
  rates: {
    errors: TOO_EXPENSIVE,
    response: {
      period: "30d",
      from: "2026-10-05T09:00:00.000Z",
      to: "2026-11-04T09:00:00.000Z",
      delivered: 1200,
      opens_unique: 495,
      clicks_unique: 105,
      bounces: 12,
      complaints: 1,
      unsubs: 3,
      rates
    }
  }
}
