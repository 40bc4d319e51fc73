// The sandbox's public surface, for the plugin bundle, doctor and the runner. Only node: builtins and
// Bun APIs below this folder, and nothing runs at import time.
export { ALL_PROFILES, profileName, profilePolicy, type NetworkAccess, type ProfilePolicy, type SandboxProfile, type WorkspaceAccess } from "./profiles"
export { LIMIT_SPECS, parseSandboxLimits, type SandboxLimits } from "./limits"
export { hostFs, type EntryKind, type FsView } from "./fs-view"
export { canonicalDir, HOME_CREDENTIALS, pathRules, refusal, type PathPurpose, type PathRules } from "./host-paths"
export { checkMounts, type Mount } from "./mounts"
export { resolveToolchain, type Toolchain, type TrustedRootInput } from "./toolchains"
export { gitMetadataPaths } from "./git-metadata"
export { hostContext, planSandbox, SANDBOX_HOME, type HostContext, type SandboxPlan, type SandboxRequest } from "./plan"
export { BWRAP, bwrapArgs, ISOLATION_FLAGS } from "./argv"
export { classifyBwrapFailure, isSafeVersion, MIN_SAFE_VERSION, parseBwrapVersion, type BwrapFailure, type BwrapFailureCode } from "./bwrap"
export { readBwrapVersion, runSandboxed, type SandboxRunOptions, type SandboxRunResult } from "./run"
export { probeBwrap, probeSandboxProfiles, type BwrapReport, type ProbeReport } from "./probes"
