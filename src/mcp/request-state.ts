// The seal on a 2026-07-28 call's `requestState` (input-rounds.ts): the state comes back from the client, so it
// is signed with the SDK's HMAC codec under a key made at each start, and the SDK refuses one that fails
// (-32602, "Invalid or expired requestState") before any handler runs. A successor process refuses an earlier
// one's states: the flows they name lived in that process. Apart from input-rounds.ts so the server holds
// the seal from its start without loading the relay.
import { createRequestStateCodec } from "@modelcontextprotocol/server"

/** What a flow's `requestState` carries: the flow, the task it follows and the tool the client calls again. */
export interface RoundState {
  flow: string
  task: string
  tool: string
}

/** How long a `requestState` is honoured: well past any ask's wait, so only a stale replay meets it. */
const STATE_TTL_SECONDS = 3600

const codec = createRequestStateCodec<RoundState>({
  key: crypto.getRandomValues(new Uint8Array(32)),
  ttlSeconds: STATE_TTL_SECONDS,
})

/** ServerOptions.requestState: the check the SDK runs on every echoed state. */
export const requestStateCheck = { verify: codec.verify }

export const sealRound = (state: RoundState): Promise<string> => codec.mint(state)
