/**
 * How much message content the MTA's attempts may hold in memory at once
 * (HERALD_MTA_MESSAGE_BUDGET_MB). An attempt loads its message's request (attachments included,
 * up to MAX_JSON_MB) and the composed, signed MIME: HERALD_MTA_CONCURRENCY attempts of distinct
 * 15 MB messages would otherwise need gigabytes. Room is counted once per message (its recipients
 * share one load and one signature, see Delivery.ts), by the request's size as written at accept
 * time. A message larger than the whole budget still goes, alone.
 *
 * A plain value with pure transitions (`takeRoom`, `giveRoom`): it is part of the MTA's state
 * (mta-state.ts), which a metrics endpoint reads as it is. `makeMessageBudget` wraps it for
 * callers that keep one budget of their own.
 */
export interface BudgetState {
  readonly capacityBytes: number
  /** Bytes held now. */
  readonly used: number
  /** Each message held, with how many deliveries hold it and the room it takes. */
  readonly holders: ReadonlyMap<string, { readonly refs: number; readonly bytes: number }>
}

export const emptyBudget = (capacityBytes: number): BudgetState => ({ capacityBytes, used: 0, holders: new Map() })

/** Room taken for a message (or one more holder of it), or undefined: not now, wait for a `giveRoom`. */
export const takeRoom = (budget: BudgetState, messageId: string, bytes: number): BudgetState | undefined => {
  const held = budget.holders.get(messageId)
  const holders = new Map(budget.holders)
  if (held !== undefined) {
    holders.set(messageId, { refs: held.refs + 1, bytes: held.bytes })
    return { ...budget, holders }
  }
  if (budget.used > 0 && budget.used + bytes > budget.capacityBytes) return undefined
  holders.set(messageId, { refs: 1, bytes })
  return { ...budget, used: budget.used + bytes, holders }
}

/** One holder of the message is done; `freed` says whether its room was given back (it was the last). */
export const giveRoom = (budget: BudgetState, messageId: string): { readonly budget: BudgetState; readonly freed: boolean } => {
  const held = budget.holders.get(messageId)
  if (held === undefined) return { budget, freed: false }
  const holders = new Map(budget.holders)
  if (held.refs > 1) {
    holders.set(messageId, { refs: held.refs - 1, bytes: held.bytes })
    return { budget: { ...budget, holders }, freed: false }
  }
  holders.delete(messageId)
  return { budget: { ...budget, used: budget.used - held.bytes, holders }, freed: true }
}

export interface MessageBudget {
  /** Takes room for a message (or joins its holders); false: not now, wait for `give`. */
  readonly take: (messageId: string, bytes: number) => boolean
  /** One holder of the message is done; answers whether room was freed. */
  readonly give: (messageId: string) => boolean
  /** Bytes held now. */
  readonly used: () => number
}

export const makeMessageBudget = (capacityBytes: number): MessageBudget => {
  let budget = emptyBudget(capacityBytes)
  return {
    take: (messageId, bytes) => {
      const next = takeRoom(budget, messageId, bytes)
      if (next === undefined) return false
      budget = next
      return true
    },
    give: (messageId) => {
      const given = giveRoom(budget, messageId)
      budget = given.budget
      return given.freed
    },
    used: () => budget.used
  }
}
