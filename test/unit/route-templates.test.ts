/**
 * The HTTP metrics' route label (src/http/route-templates.ts): a path's template from the router's
 * own routes, literal segments before parameters, `*` for the rest, and one label for every path
 * no route has — never the raw path, whatever a client sends.
 */
import { describe, expect, it } from "vitest"
import { makeRouteTemplates, UNMATCHED_ROUTE } from "../../src/http/route-templates.ts"

const routeOf = makeRouteTemplates([
  { path: "/v1/mail/send" },
  { path: "/v1/bulk/contacts/import" },
  { path: "/v1/bulk/contacts/:id" },
  { path: "/v1/bulk/campaigns/:id/send" },
  { path: "/reference/bulk/*" },
  { path: "/" }
])

describe("route templates", () => {
  it("names a path by its route's template", () => {
    expect(routeOf("/v1/mail/send")).toBe("/v1/mail/send")
    expect(routeOf("/v1/mail/send?x=1")).toBe("/v1/mail/send")
    expect(routeOf("/v1/bulk/contacts/ct_abc")).toBe("/v1/bulk/contacts/:id")
    expect(routeOf("/v1/bulk/contacts/someone%40example.com")).toBe("/v1/bulk/contacts/:id")
    expect(routeOf("/v1/bulk/campaigns/cp_1/send")).toBe("/v1/bulk/campaigns/:id/send")
    expect(routeOf("/reference/bulk/anything/below")).toBe("/reference/bulk/*")
    expect(routeOf("/")).toBe("/")
  })

  it("prefers a literal segment to a parameter, as the router does", () => {
    expect(routeOf("/v1/bulk/contacts/import")).toBe("/v1/bulk/contacts/import")
  })

  it("gives every unknown path the one unmatched label", () => {
    for (const path of ["/nope", "/v1/bulk/contacts/a/b", "/v1/mail", `/x/${"a".repeat(5000)}`]) expect(routeOf(path)).toBe(UNMATCHED_ROUTE)
  })
})
