/**
 * How much message content the MTA's attempts may hold in memory at once
 * (HERALD_MTA_MESSAGE_BUDGET_MB). An attempt loads its message's request (attachments included,
 * up to MAX_JSON_MB) and the composed, signed MIME: HERALD_MTA_CONCURRENCY attempts of distinct
 * 15 MB messages would otherwise need gigabytes. Room is counted once per message (its recipients
 * share one load and one signature, see Delivery.ts), by the request's size as written at accept
 * time. A message larger than the whole budget still goes, alone. Plain bookkeeping, no fibers:
 * the MTA's loop asks and gives back synchronously.
 */
export interface MessageBudget {
  /** Takes room for a message (or joins its holders); false: not now, wait for `give`. */
  readonly take: (messageId: string, bytes: number) => boolean
  /** One holder of the message is done; answers whether room was freed. */
  readonly give: (messageId: string) => boolean
  /** Bytes held now. */
  readonly used: () => number
}

export const makeMessageBudget = (capacityBytes: number): MessageBudget => {
  const holders = new Map<string, { refs: number; readonly bytes: number }>()
  let used = 0
  return {
    take: (messageId, bytes) => {
      const held = holders.get(messageId)
      if (held !== undefined) {
        held.refs += 1
        return true
      }
      if (used > 0 && used + bytes > capacityBytes) return false
      holders.set(messageId, { refs: 1, bytes })
      used += bytes
      return true
    },
    give: (messageId) => {
      const held = holders.get(messageId)
      if (held === undefined) return false
      held.refs -= 1
      if (held.refs > 0) return false
      holders.delete(messageId)
      used -= held.bytes
      return true
    },
    used: () => used
  }
}
