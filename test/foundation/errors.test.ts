/**
 * The one error envelope for what the HTTP machinery itself refuses: unknown routes (404), bodies
 * over their route's limit (HERALD_HTTP_MAX_BODY_KB here: every route but the send, whose larger
 * limit is MAX_JSON_MB) whether announced by Content-Length or streamed chunked (413), malformed JSON
 * (400 invalid_json) and schema failures (400 validation_failed naming the field).
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"

const MB = 1024 * 1024
let app: Appliance
beforeAll(async () => {
  // The send's MAX_JSON_MB at its default (15): a 2 MB body to another route is still refused.
  app = await startAppliance()
})
afterAll(() => app.stop())

interface RawAnswer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly json: { error: Record<string, string> }
}

/**
 * POSTs a JSON key request whose label is `labelBytes` long, streamed in 64 KiB chunks with
 * Transfer-Encoding: chunked (no Content-Length), so the server only learns the size while
 * reading. The server may answer before the whole body is written; the answer is what counts.
 */
const postChunked = (route: string, token: string, labelBytes: number) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const req = http.request(new URL(route, app.baseUrl), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "transfer-encoding": "chunked" }
    })
    req.on("response", (res) => {
      let text = ""
      res.on("data", (chunk: Buffer) => (text += chunk.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) }))
    })
    req.on("error", reject)
    const chunk = "x".repeat(64 * 1024)
    req.write("{\"label\":\"")
    let sent = 0
    const pump = (): void => {
      while (sent < labelBytes) {
        const part = chunk.slice(0, Math.min(chunk.length, labelBytes - sent))
        sent += part.length
        if (!req.write(part)) return void req.once("drain", pump)
      }
      req.end("\"}")
    }
    pump()
  })

describe("a method the path does not serve", () => {
  it.each([
    ["DELETE", "/v1/mail/send", "POST"],
    ["GET", "/v1/mail/send", "POST"],
    ["PUT", "/v1/client/keys", "GET, HEAD, POST"],
    ["POST", "/v1/client/keys/key_x", "DELETE, GET, HEAD, PATCH"],
    ["PUT", "/version", "GET, HEAD"],
    ["POST", "/openapi/openapi.transactional.json", "GET, HEAD"]
  ])("answers %s %s with 405 method_not_allowed and Allow: %s", async (method, route, allow) => {
    const res = await app.request(method, route, { token: null })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe(allow)
    expect(res.json).toEqual({
      error: { type: "invalid_request_error", code: "method_not_allowed", message: expect.stringContaining(allow) }
    })
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("still answers the methods the path serves, and 404 for a path nobody serves", async () => {
    expect((await app.request("GET", "/v1/client/keys")).status).toBe(200)
    expect((await app.request("GET", "/v1/mail/scheduled/sch_none")).status).toBe(404)
    expect((await app.request("HEAD", "/version", { token: null })).status).toBe(200)
  })
})

describe("unknown routes", () => {
  it.each([
    ["GET", "/v1/nothing/here"],
    ["POST", "/v1/client/keys/key_x/rotate"],
    ["GET", "/not-an-api-path"],
    ["DELETE", "/v1/mail/send/extra"]
  ])("answer %s %s with 404 in the envelope", async (method, route) => {
    const res = await app.request(method, route)
    expect(res.status).toBe(404)
    expect(res.json).toEqual({
      error: { type: "invalid_request_error", code: "not_found", message: expect.stringContaining("No route") }
    })
    expect(res.headers.get("content-type")).toContain("application/json")
  })
})

describe("bodies over HERALD_HTTP_MAX_BODY_KB on routes other than the send", () => {
  it("answers 413 payload_too_large when Content-Length announces more than the limit", async () => {
    const res = await app.request("POST", "/v1/client/keys", { rawBody: JSON.stringify({ label: "x".repeat(2 * MB) }) })
    expect(res.status).toBe(413)
    expect(res.json).toEqual({
      error: { type: "invalid_request_error", code: "payload_too_large", message: expect.stringContaining("HERALD_HTTP_MAX_BODY_KB") }
    })
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("answers 413 payload_too_large for a chunked body that grows past the limit", async () => {
    const res = await postChunked("/v1/client/keys", app.adminToken, 2 * MB)
    expect(res.status).toBe(413)
    expect(res.json).toEqual({
      error: { type: "invalid_request_error", code: "payload_too_large", message: expect.stringContaining("HERALD_HTTP_MAX_BODY_KB") }
    })
    expect(res.headers["x-request-id"]).toMatch(/^req_/)
  })

  it("reads a chunked body under the limit like any other", async () => {
    const created = await postChunked("/v1/client/keys", app.adminToken, 20)
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ label: "x".repeat(20) })
    const tooLong = await postChunked("/v1/client/keys", app.adminToken, 200 * 1024)
    expect(tooLong.status).toBe(400)
    expect(tooLong.json.error).toMatchObject({ code: "validation_failed", param: "label" })
  })

  it("still serves the next request after refusing a large body", async () => {
    await postChunked("/v1/client/keys", app.adminToken, 2 * MB)
    expect((await app.request("GET", "/v1/client/keys")).status).toBe(200)
  })
})

describe("malformed bodies", () => {
  it.each([
    ["a truncated object", "{\"label\": "],
    ["a trailing comma", "{\"label\": \"a\",}"],
    ["single quotes", "{'label': 'a'}"],
    ["plain text", "label=a"]
  ])("answers %s with 400 invalid_json and a message saying what is wrong", async (_, rawBody) => {
    const res = await app.request("POST", "/v1/client/keys", { rawBody })
    expect(res.status).toBe(400)
    expect(res.json).toEqual({
      error: { type: "invalid_request_error", code: "invalid_json", message: expect.stringContaining("JSON") }
    })
  })

  it("answers a JSON value of the wrong shape with 400 validation_failed, not invalid_json", async () => {
    const res = await app.request("POST", "/v1/client/keys", { rawBody: "[1, 2]" })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe("validation_failed")
  })
})

describe("validation messages", () => {
  it.each([
    ["a missing field", "/v1/admin/accounts", { email: "a@example.com", password: "long enough pw" }, "name"],
    ["a wrong type", "/v1/admin/accounts", { name: "A", email: 5, password: "long enough pw" }, "email"],
    ["a too-short value", "/v1/admin/accounts", { name: "A", email: "a@example.com", password: "short" }, "password"],
    ["an empty label", "/v1/client/keys", { label: "" }, "label"]
  ])("name the field in param for %s", async (_, route, body, param) => {
    const res = await app.request("POST", route, { body })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param })
    expect(res.json.error.message).toContain(param)
  })
})
