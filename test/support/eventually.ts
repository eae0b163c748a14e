/**
 * Polls `check` every 50 ms until it answers something other than undefined; throws after
 * `timeoutMs`, naming `what` it waited for. For what Herald does after it has answered (a record
 * written by a batched writer, a message parsed after its 250, an event delivered).
 */
export const eventually = async <A>(check: () => Promise<A | undefined>, what: string, timeoutMs = 20_000): Promise<A> => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
