/**
 * The console's only way to the appliance: same-origin fetch with the session cookie. Every
 * non-GET carries the session's CSRF token in `X-Herald-CSRF` (the appliance refuses a
 * cookie-authenticated write without it). An error answer becomes an `ApiError` carrying the
 * API's envelope, so a view shows the API's own message next to what caused it; a 401 also tells
 * the session (the sign-in screen replaces the page, never a half-working one).
 */
import type { ErrorEnvelope, Session } from "./types.ts"

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    /** The request field the error is about, when the API names one. */
    readonly param: string | undefined
  ) {
    super(message)
  }
}

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE"

let csrfToken: string | undefined
let onUnauthorized: () => void = () => undefined

/** The token `GET /console/session` gave; every later write carries it. */
export const setCsrfToken = (token: string | undefined): void => {
  csrfToken = token
}

/** Called on any 401: the session is gone (signed out elsewhere, expired, suspended). */
export const setUnauthorizedHandler = (handler: () => void): void => {
  onUnauthorized = handler
}

const isEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === "object" && body !== null && "error" in body &&
  typeof (body as { error: unknown }).error === "object" && (body as ErrorEnvelope).error !== null &&
  typeof (body as ErrorEnvelope).error.message === "string"

const errorFrom = async (response: Response): Promise<ApiError> => {
  const text = await response.text().catch(() => "")
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (isEnvelope(body)) {
    const { code, message, param, type } = body.error
    return new ApiError(response.status, type, code, message, param)
  }
  // Not the API's envelope (a proxy in front, a crash): say what we got rather than nothing.
  return new ApiError(response.status, "api_error", "unexpected_response", `The appliance answered ${response.status} ${response.statusText}.`, undefined)
}

export interface RequestOptions {
  readonly body?: unknown
  readonly query?: Record<string, string | number | boolean | undefined>
  /** A 401 here is expected (reading the session before sign-in): do not signal sign-out. */
  readonly quietUnauthorized?: boolean
}

const urlOf = (path: string, query: RequestOptions["query"]): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(name, String(value))
  }
  const search = params.toString()
  return search === "" ? path : `${path}?${search}`
}

/** One API call; resolves with the parsed JSON body (undefined for 204) or rejects with ApiError. */
export const request = async <T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> =>
  (await requestWithHeaders<T>(method, path, options)).body

/**
 * One API call, with the answer's headers too (the overview reads the RateLimit-* headers of an
 * answer to show the key's headroom).
 */
export const requestWithHeaders = async <T>(
  method: Method,
  path: string,
  options: RequestOptions = {}
): Promise<{ body: T; headers: Headers }> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (method !== "GET" && csrfToken !== undefined) headers["x-herald-csrf"] = csrfToken
  if (options.body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(urlOf(path, options.query), {
      method,
      headers,
      credentials: "same-origin",
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
  } catch {
    throw new ApiError(0, "api_error", "network_error", "The appliance could not be reached. Check the connection and try again.", undefined)
  }
  if (!response.ok) {
    const error = await errorFrom(response)
    if (response.status === 401 && options.quietUnauthorized !== true) onUnauthorized()
    throw error
  }
  if (response.status === 204) return { body: undefined as T, headers: response.headers }
  try {
    return { body: (await response.json()) as T, headers: response.headers }
  } catch {
    throw new ApiError(response.status, "api_error", "unexpected_response", `The appliance's answer to ${method} ${path} was not JSON.`, undefined)
  }
}

/** The session routes (#28 "Sign-in"). */
export const sessionApi = {
  read: () => request<Session>("GET", "/console/session", { quietUnauthorized: true }),
  signIn: (email: string, password: string) =>
    request<void>("POST", "/console/session", { body: { email, password }, quietUnauthorized: true }),
  switchKey: (activeKeyId: string) => request<void>("PATCH", "/console/session", { body: { active_key_id: activeKeyId } }),
  signOut: () => request<void>("DELETE", "/console/session")
}
