/**
 * What an area builds its handlers against. `HttpApiBuilder.group(api, name, build)` needs an
 * HttpApi that holds the group: for the handlers' types (which errors they may fail with) and to
 * find the group's endpoints. The served API (src/api/api.ts) holds every area's groups, but it
 * sits above every area, which may not import it (docs/architecture.md "Layering"). So an area passes
 * `groupApi(ItsGroup)`: an API of that one group under the served API's id, with the errors the
 * served API adds to every endpoint.
 *
 * That is enough because HttpApiBuilder knows a group's handlers by the API's id and the group's
 * name (the layer provides `ApiGroup<"herald", name>`, what `HttpApiBuilder.api(HeraldApi)` asks
 * for: a handler layer missing there fails to compile), and builds their routes from the group's
 * own endpoints and middleware, the same objects the served API holds. Errors are encoded by the
 * served API's error schema, not this one's.
 */
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import { BadRequest, Internal, NotFound, PayloadTooLarge, Unavailable } from "./errors.ts"

/** The served API's id (src/api/api.ts makes HeraldApi with it). */
export const HERALD_API_ID = "herald"

/**
 * The API of `group` for its handlers. Its errors are what every handler of the served API may
 * fail with today: the four every endpoint answers (400, 404, 413, 500) and 503, which the bulk
 * area declares for all its routes (`render_busy`) and the served API therefore allows everywhere.
 */
export const groupApi = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group) =>
  HttpApi.make(HERALD_API_ID)
    .add(group)
    .addError(BadRequest)
    .addError(NotFound)
    .addError(PayloadTooLarge)
    .addError(Internal)
    .addError(Unavailable)
