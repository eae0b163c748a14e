/**
 * Templates against a running appliance: the rendering engine through the preview endpoint (a
 * table of cases), its bounds, MJML, CRUD with versions and pruning, isolation between keys, and a
 * test-send that reaches the SMTP sink rendered and DKIM-signed.
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"
import { verifyDkimAgainstPublished } from "../support/dkim.ts"

let rig: DeliveryRig
let sender: Sender
let other: Sender

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_TEMPLATE_VERSIONS_MAX: "3" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const preview = (body: Record<string, unknown>) => api("POST", "/v1/bulk/templates/preview", body)

describe("rendering (preview)", () => {
  const cases: ReadonlyArray<{ name: string; body: Record<string, unknown>; expect: Record<string, unknown> }> = [
    {
      name: "escapes in html, not in subject or text",
      body: { subject: "Hi {{ name }}", html: "<p>{{ name }}</p>", body_text: "Hi {{ name }}", vars: { name: "<b>Ada & co</b>" } },
      expect: { subject: "Hi <b>Ada & co</b>", html: "<p>&lt;b&gt;Ada &amp; co&lt;/b&gt;</p>", body_text: "Hi <b>Ada & co</b>" }
    },
    {
      name: "missing variables render empty and are listed",
      body: { subject: "{{ a }}-{{ metadata.plan }}", html: "<p>{{ b }}</p>", body_text: "x", vars: { b: "B" } },
      expect: { subject: "-", html: "<p>B</p>", variables: ["a", "b", "metadata.plan"], missing: ["a", "metadata.plan"] }
    },
    {
      name: "loops and filters",
      body: { subject: "{{ items | size }}", html: "", body_text: "{% for i in items %}{{ i | upcase }},{% endfor %}", vars: { items: ["a", "b"] } },
      expect: { subject: "2", body_text: "A,B,", html: "" }
    },
    {
      name: "preheader becomes hidden inbox-preview text",
      body: { subject: "s", html: "<html><body><p>Body</p></body></html>", body_text: "t", preheader: "Sale for {{ name }}", vars: { name: "Ada" } },
      expect: {}
    },
    {
      name: "text part generated from the html when body_text is empty",
      body: { subject: "s", html: "<h1>Hello {{ name }}</h1><p>Visit <a href=\"https://x.test/{{ name }}\">us</a></p>", body_text: "", vars: { name: "ada" } },
      expect: {}
    }
  ]
  for (const c of cases) {
    it(c.name, async () => {
      const res = await preview(c.body)
      expect(res.status).toBe(200)
      expect(res.json).toMatchObject(c.expect)
      if (c.name.startsWith("preheader")) expect(res.json.html).toMatch(/<body><div style="display:none[^"]*">Sale for Ada<\/div><p>Body/)
      if (c.name.startsWith("text part")) {
        expect(res.json.body_text).toContain("Hello ada")
        expect(res.json.body_text).toContain("https://x.test/ada")
      }
    })
  }

  const refused: ReadonlyArray<{ name: string; body: Record<string, unknown>; param: string; message: RegExp; within?: number }> = [
    { name: "an unknown filter", body: { subject: "s", html: "<p>\n{{ x | shell }}</p>" }, param: "html", message: /line 2, column 1.*undefined filter: shell/ },
    { name: "an include of a file", body: { subject: "s", html: "{% include '/etc/passwd' %}" }, param: "html", message: /include tag is not allowed/ },
    { name: "a render of a file", body: { subject: "{% render 'x' %}" }, param: "subject", message: /render tag is not allowed/ },
    { name: "a syntax error", body: { body_text: "ok\n  {% if %}" }, param: "body_text", message: /line 2, column \d+/ },
    { name: "a huge range", body: { html: "{% for i in (1..100000000) %}{% endfor %}" }, param: "html", message: /limit/ },
    { name: "a padded date format", body: { subject: "{{ 'now' | date: '%100000000Y' }}" }, param: "subject", message: /limit/ },
    // Stopped by liquidjs's own check between nodes or, at the latest, by the render worker's
    // deadline — off the main thread either way (liquidjs's check is at 5 s at most).
    { name: "nested loops past the render time limit", body: { body_text: "{% for i in (1..5000) %}{% for j in (1..5000) %}{% endfor %}{% endfor %}" }, param: "body_text", message: /limit|longer than/, within: 7_000 }
  ]
  for (const c of refused) {
    it(`refuses ${c.name} with render_failed, quickly`, async () => {
      const started = Date.now()
      const res = await preview(c.body)
      expect(Date.now() - started).toBeLessThan(c.within ?? 1000)
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "render_failed", param: c.param })
      expect(res.json.error.message).toMatch(c.message)
    })
  }

  it("reads no code: constructor and prototype are not variables", async () => {
    const res = await preview({ subject: "{{ name.constructor }}{{ vars.__proto__ }}", vars: { name: "x" } })
    expect(res.status).toBe(200)
    expect(res.json.subject).toBe("")
  })

  it("compiles MJML with placeholders, and reports its validation errors", async () => {
    const ok = await preview({
      subject: "s",
      mjml: "<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{ name }}</mj-text><mj-button href=\"https://x.test/{{ name }}\">Go</mj-button></mj-column></mj-section></mj-body></mjml>",
      vars: { name: "ada" }
    })
    expect(ok.status).toBe(200)
    expect(ok.json.html).toContain("Hi ada")
    expect(ok.json.html).toContain("https://x.test/ada")
    const bad = await preview({ subject: "s", mjml: "<mjml><mj-body><mj-section>\n<mj-text>x</mj-text></mj-section></mj-body></mjml>" })
    expect(bad.status).toBe(400)
    expect(bad.json.error).toMatchObject({ code: "render_failed", param: "mjml" })
    expect(bad.json.error.message).toMatch(/line 2/)
  })

  it("refuses mj-include: no template reads the server's files", async () => {
    const res = await preview({ subject: "s", mjml: "<mjml><mj-body><mj-include path=\"/etc/passwd\" /></mj-body></mjml>" })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "render_failed", param: "mjml" })
    expect(res.text).not.toContain("root:")
  })
})

describe("templates", () => {
  it("creates, reads, updates, keeps at most max versions, restores, deletes", async () => {
    const created = await api("POST", "/v1/bulk/templates", { name: "Welcome", subject: "v1", html: "<p>1</p>", vars: { a: 1 } })
    expect(created.status).toBe(201)
    expect(created.json.id).toMatch(/^tp_[A-Za-z0-9]{20}$/)
    const id = created.json.id
    for (const n of [2, 3, 4]) {
      const updated = await api("PATCH", `/v1/bulk/templates/${id}`, { subject: `v${n}`, html: n === 4 ? "" : `<p>${n}</p>` })
      expect(updated.status).toBe(200)
    }
    const versions = await api("GET", `/v1/bulk/templates/${id}/versions`)
    expect(versions.json.max).toBe(3)
    expect(versions.json.items.map((v: { id: number }) => v.id)).toEqual([4, 3, 2])
    expect(versions.json.items[0]).toMatchObject({ subject: "v4", actor: sender.keyId, tiene_html: false, html_bytes: 0 })
    expect(versions.json.items[1]).toMatchObject({ subject: "v3", tiene_html: true, html_bytes: 8 })
    expect(versions.json.items[0].html).toBeUndefined()

    const restored = await api("POST", `/v1/bulk/templates/${id}/versions/3/restore`)
    expect(restored.status).toBe(200)
    expect(restored.json).toMatchObject({ subject: "v3", html: "<p>3</p>" })
    const after = await api("GET", `/v1/bulk/templates/${id}/versions`)
    expect(after.json.items.map((v: { id: number }) => v.id)).toEqual([5, 4, 3])
    expect((await api("POST", `/v1/bulk/templates/${id}/versions/1/restore`)).status).toBe(404)

    const list = await api("GET", "/v1/bulk/templates?limit=1")
    expect(list.json).toMatchObject({ limit: 1, offset: 0 })
    expect(list.json.total).toBeGreaterThanOrEqual(1)
    expect((await api("GET", "/v1/bulk/templates?limit=201")).status).toBe(400)

    const deleted = await api("DELETE", `/v1/bulk/templates/${id}`)
    expect(deleted.json).toEqual({ id, deleted: true })
    expect((await api("GET", `/v1/bulk/templates/${id}`)).status).toBe(404)
  })

  it("compiles mjml on save, and refuses a broken template when saved", async () => {
    const created = await api("POST", "/v1/bulk/templates", {
      name: "M",
      subject: "s",
      mjml: "<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{ name }}</mj-text></mj-column></mj-section></mj-body></mjml>"
    })
    expect(created.status).toBe(201)
    expect(created.json.html).toContain("Hi {{ name }}")
    const broken = await api("POST", "/v1/bulk/templates", { name: "B", subject: "{{ x | nope }}" })
    expect(broken.status).toBe(400)
    expect(broken.json.error).toMatchObject({ code: "render_failed", param: "subject" })
    // One field over its bound is that field's 400; fields within theirs but together over 512 KB, the template's 413.
    const tooBig = await api("POST", "/v1/bulk/templates", { name: "Big", subject: "s", html: "x".repeat(513 * 1024) })
    expect(tooBig.status).toBe(400)
    expect(tooBig.json.error).toMatchObject({ code: "validation_failed", param: "html" })
    const together = await api("POST", "/v1/bulk/templates", { name: "Big", subject: "s", html: "x".repeat(300 * 1024), body_text: "x".repeat(300 * 1024) })
    expect(together.status).toBe(413)
  })

  it("belongs to its key: another key's template is not found", async () => {
    const created = await api("POST", "/v1/bulk/templates", { name: "Mine", subject: "s" })
    const id = created.json.id
    for (const [method, route] of [["GET", `/v1/bulk/templates/${id}`], ["PATCH", `/v1/bulk/templates/${id}`], ["DELETE", `/v1/bulk/templates/${id}`], ["GET", `/v1/bulk/templates/${id}/versions`]] as const) {
      const res = await api(method, route, method === "PATCH" ? { name: "theirs" } : undefined, other.token)
      expect(res.status).toBe(404)
    }
    const sent = await api("POST", `/v1/bulk/templates/${id}/test-send`, { to_email: "x@dest.example", from_email: other.from }, other.token)
    expect(sent.status).toBe(404)
    const theirs = await api("GET", "/v1/bulk/templates", undefined, other.token)
    expect(theirs.json.items.map((t: { id: string }) => t.id)).not.toContain(id)
  })
})

describe("test-send", () => {
  it("delivers the rendered template, DKIM-signed, on the bulk channel, and emits no delivery event", async () => {
    const created = await api("POST", "/v1/bulk/templates", {
      name: "T",
      subject: "Hello {{ name }}",
      html: "<p>Hi {{ name }}, plan {{ plan }}</p>",
      vars: { plan: "basic", name: "Default" },
      from_email: sender.from,
      from_name: "Herald"
    })
    const before = rig.sink.received.length
    const res = await api("POST", `/v1/bulk/templates/${created.json.id}/test-send`, { to_email: "tester@dest.example", sample_vars: { name: "Ada" } })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ ok: true, to: "tester@dest.example" })
    expect(res.headers.get("ratelimit-limit")).not.toBeNull()
    await rig.sink.waitFor(before + 1)
    const raw = rig.sink.received[before]!.raw
    const parsed = await simpleParser(raw)
    expect(parsed.subject).toBe("[Test] Hello Ada")
    expect(parsed.html).toContain("Hi Ada, plan basic")
    expect(parsed.text).toContain("Hi Ada, plan basic")
    expect(parsed.headers.get("x-herald-channel")).toBe("bulk")
    expect(parsed.headers.get("list-unsubscribe")).toBeUndefined()

    expect(await verifyDkimAgainstPublished(rig.app, sender.token, sender.domain, raw)).toMatchObject({ signingDomain: sender.domain, status: { result: "pass" } })

    const rows = await query<{ origin: string; channel: string }>(rig.app.databaseUrl, "SELECT origin, channel FROM messages WHERE id = $1", [res.json.message_id])
    expect(rows[0]).toEqual({ origin: "test_send", channel: "bulk" })
    await new Promise((r) => setTimeout(r, 500))
    const events = await query(rig.app.databaseUrl, "SELECT event FROM events WHERE payload->>'message_id' = $1", [res.json.message_id])
    expect(events).toEqual([])
    const usage = await query<{ sent: number }>(rig.app.databaseUrl, "SELECT sent FROM key_usage WHERE key_id = $1", [sender.keyId])
    expect(usage[0]!.sent).toBeGreaterThanOrEqual(1)
  })

  it("refuses a suppressed recipient, a missing sender, an unverified domain and an invalid address", async () => {
    const created = await api("POST", "/v1/bulk/templates", { name: "R", subject: "s", body_text: "t" })
    const id = created.json.id
    expect((await api("POST", "/v1/client/suppressions", { email: "gone@dest.example", reason: "unsubscribe" })).status).toBeLessThan(300)
    const before = await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE key_id = $1", [sender.keyId])
    const suppressed = await api("POST", `/v1/bulk/templates/${id}/test-send`, { to_email: "gone@dest.example", from_email: sender.from })
    expect(suppressed.status).toBe(400)
    expect(suppressed.json.error).toMatchObject({ code: "recipient_suppressed", param: "to_email" })
    const noSender = await api("POST", `/v1/bulk/templates/${id}/test-send`, { to_email: "a@dest.example" })
    expect(noSender.json.error).toMatchObject({ code: "validation_failed", param: "from_email" })
    const unverified = await api("POST", `/v1/bulk/templates/${id}/test-send`, { to_email: "a@dest.example", from_email: "x@unverified.example" })
    expect(unverified.status).toBe(403)
    expect(unverified.json.error.code).toBe("domain_not_verified")
    const invalid = await api("POST", `/v1/bulk/templates/${id}/test-send`, { to_email: "not-an-address", from_email: sender.from })
    expect(invalid.status).toBe(400)
    expect(invalid.json.error.code).toBe("validation_failed")
    const afterRows = await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE key_id = $1", [sender.keyId])
    expect(afterRows.length).toBe(before.length)
  })
})
