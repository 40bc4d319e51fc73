// patch_apply and patch_discard as the patch tests call them, on the patch a worker's result names;
// the caller asserts on what they answer.
import type { Client, CallToolResult } from "@modelcontextprotocol/client"

/** The patch as a worker's result names it. */
export interface PatchRef {
  patch_id: string
  digest: string
}

/** patch_apply of `patch`; `extra` adds allow_links or puts another digest in place of its own. */
export const apply = (client: Client, patch: PatchRef, extra: { digest?: string; allow_links?: boolean } = {}) =>
  client.callTool({
    name: "patch_apply",
    arguments: { patch_id: patch.patch_id, digest: patch.digest, ...extra },
  }) as Promise<CallToolResult>

/** patch_discard of the patch `patchId`. */
export const discard = (client: Client, patchId: string) =>
  client.callTool({ name: "patch_discard", arguments: { patch_id: patchId } }) as Promise<CallToolResult>
