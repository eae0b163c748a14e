import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { renderFailedAnswer } from "../http-answers.ts"
import { SettingsGroup } from "./Api.ts"
import { BulkSettings } from "./Settings.ts"

export const SettingsHttpLive = HttpApiBuilder.group(groupApi(SettingsGroup), "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* BulkSettings
    return handlers
      .handle("read", () => Effect.flatMap(CurrentKey, (me) => settings.read(me)).pipe(Effect.orDie))
      .handle("write", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => settings.write(me, payload)).pipe(
          Effect.catchTags({ RenderFailed: renderFailedAnswer, SqlError: Effect.die })
        ))
  }))
