/**
 * A real DNS server on loopback (UDP and TCP) answering MX, TXT, A and AAAA from a table, for
 * tests of verification, MX routing and webhook host checks. Unknown names → NXDOMAIN; a known
 * name without the asked type → NOERROR with no answers (NODATA). A name marked `noAnswer` gets no
 * reply at all, like a server that is down or a packet lost on the way.
 */
import * as dgram from "node:dgram"
import * as net from "node:net"
import dnsPacket from "dns-packet"

export interface DnsRecords {
  MX?: ReadonlyArray<{ readonly preference: number; readonly exchange: string }>
  TXT?: ReadonlyArray<string>
  A?: ReadonlyArray<string>
  AAAA?: ReadonlyArray<string>
  /** Queries for this name go unanswered (the resolver times out). */
  noAnswer?: boolean
}

export interface DnsServer {
  readonly port: number
  /** For HERALD_DNS_SERVERS. */
  readonly address: string
  readonly set: (name: string, records: DnsRecords | undefined) => void
  readonly close: () => Promise<void>
}

type Answer = dnsPacket.Answer

const answersFor = (records: DnsRecords, question: dnsPacket.Question): Array<Answer> => {
  const base = { name: question.name, ttl: 60, class: "IN" as const }
  switch (question.type) {
    case "MX":
      return (records.MX ?? []).map((mx) => ({ ...base, type: "MX" as const, data: mx }))
    case "TXT":
      // A record longer than one character-string (255 bytes, such as a DKIM key) goes as several, as
      // zone files publish it; resolvers join them.
      return (records.TXT ?? []).map((txt) => ({ ...base, type: "TXT" as const, data: txt.match(/[^]{1,255}/g) ?? [""] }))
    case "A":
      return (records.A ?? []).map((ip) => ({ ...base, type: "A" as const, data: ip }))
    case "AAAA":
      return (records.AAAA ?? []).map((ip) => ({ ...base, type: "AAAA" as const, data: ip }))
    default:
      return []
  }
}

export const startDnsServer = async (initial: Record<string, DnsRecords> = {}): Promise<DnsServer> => {
  const table = new Map(Object.entries(initial).map(([name, r]) => [name.toLowerCase().replace(/\.$/, ""), r]))

  const respond = (query: Buffer): Buffer | null => {
    const request = dnsPacket.decode(query)
    const question = request.questions?.[0]
    const records = question === undefined ? undefined : table.get(question.name.toLowerCase().replace(/\.$/, ""))
    if (records?.noAnswer === true) return null
    return dnsPacket.encode({
      id: request.id ?? 0,
      type: "response",
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (records === undefined ? 3 : 0), // rcode 3 = NXDOMAIN
      questions: request.questions ?? [],
      answers: question !== undefined && records !== undefined ? answersFor(records, question) : []
    })
  }

  const udp = dgram.createSocket("udp4")
  udp.on("message", (message, remote) => {
    try {
      const answer = respond(message)
      if (answer !== null) udp.send(answer, remote.port, remote.address)
    } catch {
      // a malformed query gets no answer, as from a real server
    }
  })
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve))
  const port = udp.address().port

  // The same port over TCP, for answers a resolver retries there.
  const tcp = net.createServer((socket) => {
    let buffer = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
        const length = buffer.readUInt16BE(0)
        const answer = respond(buffer.subarray(2, 2 + length))
        buffer = buffer.subarray(2 + length)
        if (answer === null) continue
        const framed = Buffer.alloc(2 + answer.length)
        framed.writeUInt16BE(answer.length, 0)
        answer.copy(framed, 2)
        socket.write(framed)
      }
    })
    socket.on("error", () => socket.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject)
    tcp.listen(port, "127.0.0.1", () => resolve())
  }).catch(() => undefined)

  return {
    port,
    address: `127.0.0.1:${port}`,
    set: (name, records) => {
      const key = name.toLowerCase().replace(/\.$/, "")
      if (records === undefined) table.delete(key)
      else table.set(key, records)
    },
    close: () =>
      new Promise<void>((resolve) => {
        tcp.close()
        udp.close(() => resolve())
      })
  }
}
