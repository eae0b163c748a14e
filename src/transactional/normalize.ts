/**
 * The canonical send request: the full form, whatever form the client used. The flat form becomes
 * one personalization (content text/plain first, then text/html, as RFC 2046 §5.1.4 orders
 * alternatives from plainest to richest); X-Herald-Channel is dropped wherever the client set it
 * (the appliance sets `transactional` itself); each personalization's recipients are
 * de-duplicated across to, cc and bcc (case-insensitive; the first occurrence wins, to before cc
 * before bcc).
 */
import type { DecodedRequest, FullRequest } from "./request.ts"

type Address = FullRequest["from"]
type Headers = Readonly<Record<string, string>>

const withoutChannel = (headers: Headers | undefined): Headers | undefined => {
  if (headers === undefined) return undefined
  const kept = Object.entries(headers).filter(([name]) => name.toLowerCase() !== "x-herald-channel")
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

const dedupe = (lists: ReadonlyArray<ReadonlyArray<Address> | undefined>): Array<Array<Address>> => {
  const seen = new Set<string>()
  return lists.map((list) =>
    (list ?? []).filter((a) => {
      const key = a.email.toLowerCase()
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  )
}

export const canonicalize = (decoded: DecodedRequest): FullRequest => {
  const full: FullRequest = decoded.form === "full" ? decoded.body : {
    personalizations: [{
      to: decoded.body.to,
      ...(decoded.body.cc === undefined ? {} : { cc: decoded.body.cc }),
      ...(decoded.body.bcc === undefined ? {} : { bcc: decoded.body.bcc })
    }],
    from: decoded.body.from,
    subject: decoded.body.subject,
    content: [
      ...(decoded.body.text === undefined ? [] : [{ type: "text/plain" as const, value: decoded.body.text }]),
      ...(decoded.body.html === undefined ? [] : [{ type: "text/html" as const, value: decoded.body.html }])
    ],
    ...(decoded.body.reply_to === undefined ? {} : { reply_to: decoded.body.reply_to }),
    ...(decoded.body.headers === undefined ? {} : { headers: decoded.body.headers }),
    ...(decoded.body.attachments === undefined ? {} : { attachments: decoded.body.attachments }),
    ...(decoded.body.send_at === undefined ? {} : { send_at: decoded.body.send_at })
  }
  const headers = withoutChannel(full.headers)
  return {
    ...full,
    headers,
    personalizations: full.personalizations.map((p) => {
      const [to, cc, bcc] = dedupe([p.to, p.cc, p.bcc])
      const ph = withoutChannel(p.headers)
      return {
        to: to!,
        ...(cc!.length > 0 ? { cc: cc! } : {}),
        ...(bcc!.length > 0 ? { bcc: bcc! } : {}),
        ...(p.subject === undefined ? {} : { subject: p.subject }),
        ...(ph === undefined ? {} : { headers: ph })
      }
    })
  }
}
