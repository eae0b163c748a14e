/**
 * The shapes the console reads from the API, as the issue (#28) and the OpenAPI documents give
 * them. Only what a view reads is typed; a view that needs more adds it here.
 */

/** The error envelope every API error answers with (spec "Errors"). */
export interface ErrorEnvelope {
  readonly error: {
    readonly type: string
    readonly code: string
    readonly message: string
    readonly param?: string
  }
}

export interface SessionAccount {
  readonly id: string
  readonly name: string
  readonly email: string
  readonly is_admin: boolean
}

export interface SessionKey {
  readonly id: string
  readonly label: string
}

/** `GET /console/session`. */
export interface Session {
  readonly account: SessionAccount
  readonly keys: ReadonlyArray<SessionKey>
  readonly active_key_id: string
  readonly csrf_token: string
}
