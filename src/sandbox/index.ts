// The sandbox's public surface, for the plugin bundle, doctor and the runner. Only node: builtins and
// Bun APIs below this folder, and nothing runs at import time.
export {
  ALL_PROFILES,
  profileName,
  profilePolicy,
  type NetworkAccess,
  type ProfilePolicy,
  type SandboxProfile,
  type WorkspaceAccess,
} from "./profiles"
export { hostFs, type EntryKind, type FsView } from "./fs-view"
export {
  canonicalDir,
  engineWorktree,
  HOME_CREDENTIALS,
  LANE_NAME,
  PATCH_ID,
  pathRules,
  refusal,
  type EngineWorktrees,
  type PathPurpose,
  type PathRules,
} from "./host-paths"
export { checkMounts, type Mount } from "./mounts"
export { resolveToolchain, type Toolchain, type TrustedRootInput } from "./toolchains"
export { gitMetadataPaths } from "./git-metadata"
export { FILES_MARKER, SHARED_SERVER_VARIABLE } from "./shared-server"
export {
  AUTORUN_LIST,
  autorunBelow,
  autorunHit,
  autorunHitIn,
  autorunWrite,
  repositoryPrefix,
  contentFingerprint,
  describeHit,
  findNames,
  isAutorunPath,
  type AutorunHit,
  type ContentRule,
} from "./autorun"
export {
  AUTORUN_RULES,
  isSourceByType,
  ruleByPath,
  ruleOf,
  SOURCE_EXTENSIONS,
  type AutorunRule,
} from "./autorun-rules"
export { repositoryPrefixes, repositoryRoots } from "./roots"
export {
  isStandIn,
  neutralStandIn,
  provideStandIn,
  shownDirectory,
  standInOf,
  withScratchStandIns,
  workspaceOf,
} from "./stand-ins"
export { admitWorkspace, OPEN_POLICY, projectPluginSources, type AdmissionPolicy } from "./admission"
export {
  hostContext,
  planSandbox,
  type HostFlags,
  SANDBOX_HOME,
  type HostContext,
  type SandboxPlan,
  type SandboxRequest,
} from "./plan"
export { BWRAP, bwrapArgs, ISOLATION_FLAGS } from "./argv"
export {
  BWRAP_FIX,
  classifyBwrapFailure,
  isSafeVersion,
  MIN_SAFE_VERSION,
  parseBwrapVersion,
  type BwrapFailure,
  type BwrapFailureCode,
} from "./bwrap"
export { readBwrapVersion, runSandboxed, type SandboxRunOptions, type SandboxRunResult } from "./run"
export { probeBwrap, probeSandboxProfiles, type BwrapReport, type ProbeReport } from "./probes"
export {
  bwrapFinding,
  launcherFinding,
  LAUNCHERS,
  prerequisiteFindings,
  type Finding,
  type Launchers,
} from "./launchers"
