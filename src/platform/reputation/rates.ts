/**
 * The reputation rule (pure): an account whose hard-bounce rate or complaint rate over the window
 * passes its threshold is paused from sending. Defaults follow the large mailbox providers'
 * published guidance: bounces under 5 %, complaints under 0.1 %. A minimum volume keeps a handful
 * of early bounces from pausing a new account.
 */
export interface ReputationPolicy {
  readonly bounceRate: number
  readonly complaintRate: number
  readonly windowDays: number
  readonly minVolume: number
}

export interface Counts {
  /** Deliveries that ended (sent or bounced) in the window: the denominator of both rates. */
  readonly completed: number
  readonly hardBounces: number
  readonly complaints: number
}

export const pauseReason = (counts: Counts, policy: ReputationPolicy): string | null => {
  const volume = counts.completed
  if (volume < policy.minVolume) return null
  const bounce = counts.hardBounces / volume
  if (bounce > policy.bounceRate) {
    return `hard-bounce rate ${(bounce * 100).toFixed(2)}% over ${policy.windowDays} days passes ${(policy.bounceRate * 100).toFixed(2)}%`
  }
  const complaint = counts.complaints / volume
  if (complaint > policy.complaintRate) {
    return `complaint rate ${(complaint * 100).toFixed(3)}% over ${policy.windowDays} days passes ${(policy.complaintRate * 100).toFixed(3)}%`
  }
  return null
}
