import { describe, expect, it } from "vitest"
import { makeMessageBudget } from "../../src/mta/message-budget.ts"

describe("the MTA's message budget", () => {
  it("admits messages until their bytes would pass the capacity", () => {
    const budget = makeMessageBudget(100)
    expect(budget.take("a", 60)).toBe(true)
    expect(budget.take("b", 50)).toBe(false)
    expect(budget.take("c", 40)).toBe(true)
    expect(budget.used()).toBe(100)
  })

  it("counts a message once, however many of its recipients hold it", () => {
    const budget = makeMessageBudget(100)
    expect(budget.take("a", 60)).toBe(true)
    expect(budget.take("a", 60)).toBe(true)
    expect(budget.used()).toBe(60)
    expect(budget.give("a")).toBe(false)
    expect(budget.used()).toBe(60)
    expect(budget.give("a")).toBe(true)
    expect(budget.used()).toBe(0)
  })

  it("lets a message larger than the whole budget go when nothing else is held", () => {
    const budget = makeMessageBudget(100)
    expect(budget.take("small", 10)).toBe(true)
    expect(budget.take("huge", 500)).toBe(false)
    expect(budget.give("small")).toBe(true)
    expect(budget.take("huge", 500)).toBe(true)
    expect(budget.take("next", 1)).toBe(false)
  })

  it("ignores a give for a message it does not hold", () => {
    const budget = makeMessageBudget(100)
    expect(budget.give("nobody")).toBe(false)
    expect(budget.used()).toBe(0)
  })
})
