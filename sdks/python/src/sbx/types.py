"""Types of the sbx API, generated from sdks/openapi.json by gen_types.py; do not edit."""

from typing import Any, Dict, List, Literal, NotRequired, TypedDict


class APIKey(TypedDict):
    createdAt: str
    expiresAt: NotRequired[str]
    id: str
    lastUsedAt: NotRequired[str]
    name: NotRequired[str]
    revokedAt: NotRequired[str]
    scopes: List[str]
    team: str


class ArchiveSandboxError(TypedDict):
    error: Dict[str, Any]


class AttachPTYError(TypedDict):
    error: Dict[str, Any]


class AuditEntry(TypedDict):
    code: NotRequired[Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CPU", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PID", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "OFF_SCREEN", "PTY_EXISTS", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUN_CANCELLED", "RUNTIME_UNAVAILABLE", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SNAPSHOTS_UNSUPPORTED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "TEAMS_UNAVAILABLE", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]]
    keyId: str
    method: str
    path: str
    requestId: NotRequired[str]
    seq: int
    status: int
    team: str
    time: str


class Backup(TypedDict):
    createdAt: str
    expiresAt: NotRequired[str]
    id: str
    name: NotRequired[str]
    path: str
    sandbox: str
    sha256: str
    sizeBytes: int


class BucketMount(TypedDict):
    accessKeyId: NotRequired[str]
    bucket: str
    endpoint: str
    path: str
    pathStyle: NotRequired[bool]
    prefix: NotRequired[str]
    readOnly: NotRequired[bool]
    region: NotRequired[str]
    secretAccessKey: NotRequired[str]


class BuildCopy(TypedDict):
    dest: str
    src: List[str]


class BuildEvent(TypedDict):
    cached: NotRequired[bool]
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    image: NotRequired["Image"]
    instruction: NotRequired[str]
    layer: NotRequired[str]
    line: NotRequired[int]
    output: NotRequired[str]
    step: NotRequired[int]
    stream: NotRequired[str]
    total: NotRequired[int]
    type: str


class BuildImageError(TypedDict):
    error: Dict[str, Any]


class BuildImageFromStepsError(TypedDict):
    error: Dict[str, Any]


BuildRequest = TypedDict("BuildRequest", {"buildArgs": NotRequired[Dict[str, str]], "files": NotRequired[Dict[str, str]], "from": str, "name": str, "noCache": NotRequired[bool], "steps": List["BuildStep"], "timeoutSeconds": NotRequired[int]})


class BuildStep(TypedDict):
    cmd: NotRequired[List[str]]
    copy: NotRequired["BuildCopy"]
    entrypoint: NotRequired[List[str]]
    env: NotRequired[Dict[str, str]]
    labels: NotRequired[Dict[str, str]]
    run: NotRequired[str]
    user: NotRequired[str]
    workdir: NotRequired[str]


class ClickMouseError(TypedDict):
    error: Dict[str, Any]


class CloseProcessStdinError(TypedDict):
    error: Dict[str, Any]


class CodeError(TypedDict):
    code: NotRequired[Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CPU", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PID", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "OFF_SCREEN", "PTY_EXISTS", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUN_CANCELLED", "RUNTIME_UNAVAILABLE", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SNAPSHOTS_UNSUPPORTED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "TEAMS_UNAVAILABLE", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]]
    message: NotRequired[str]
    name: NotRequired[str]
    traceback: NotRequired[str]
    value: NotRequired[str]


CodeResult = TypedDict("CodeResult", {"application/json": NotRequired[Any], "image/jpeg": NotRequired[str], "image/png": NotRequired[str], "image/svg+xml": NotRequired[str], "main": NotRequired[bool], "text/html": NotRequired[str], "text/markdown": NotRequired[str], "text/plain": NotRequired[str]})


class Context(TypedDict):
    contextIdleSeconds: int
    createdAt: str
    cwd: str
    expiresAt: NotRequired[str]
    handle: NotRequired[str]
    id: str
    language: str
    lastUsedAt: str
    pid: int


class CreateBackupError(TypedDict):
    error: Dict[str, Any]


class CreateBackupRequest(TypedDict):
    expiresInSeconds: NotRequired[int]
    name: NotRequired[str]
    path: str


class CreateContextError(TypedDict):
    error: Dict[str, Any]


class CreateContextRequest(TypedDict):
    contextIdleSeconds: NotRequired[int]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    language: str


class CreateKeyError(TypedDict):
    error: Dict[str, Any]


class CreateKeyRequest(TypedDict):
    name: NotRequired[str]
    scopes: List[str]
    team: NotRequired[str]
    ttlSeconds: NotRequired[int]


class CreatePTYError(TypedDict):
    error: Dict[str, Any]


class CreatePTYRequest(TypedDict):
    cmd: NotRequired[List[str]]
    cols: NotRequired[int]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    rows: NotRequired[int]


class CreatePoolError(TypedDict):
    error: Dict[str, Any]


class CreatePoolRequest(TypedDict):
    max: NotRequired[int]
    min: int
    name: str
    template: "PoolTemplate"


class CreateSSHAccessError(TypedDict):
    error: Dict[str, Any]


class CreateSSHAccessRequest(TypedDict):
    expiresInSeconds: NotRequired[int]
    publicKey: NotRequired[str]


class CreateSandboxError(TypedDict):
    error: Dict[str, Any]


CreateSandboxRequest = TypedDict("CreateSandboxRequest", {"autoArchiveSeconds": NotRequired[int], "autoDeleteSeconds": NotRequired[int], "autoPauseSeconds": NotRequired[int], "autoStopSeconds": NotRequired[int], "buckets": NotRequired[List["BucketMount"]], "class": NotRequired[Literal["container", "gvisor"]], "cpu": NotRequired[float], "diskMiB": NotRequired[int], "egress": NotRequired["EgressPolicy"], "entrypoint": NotRequired[List[str]], "env": NotRequired[Dict[str, str]], "ephemeral": NotRequired[bool], "ignoreImageEntrypoint": NotRequired[bool], "image": NotRequired[str], "keepAlive": NotRequired[bool], "labels": NotRequired[Dict[str, str]], "memoryMiB": NotRequired[int], "name": NotRequired[str], "network": NotRequired[Literal["bridge", "none"]], "pidsLimit": NotRequired[int], "pool": NotRequired[str], "restartPolicy": NotRequired[Literal["never", "on-failure", "always"]], "snapshot": NotRequired[str], "ttlSeconds": NotRequired[int], "volumes": NotRequired[List["VolumeMount"]], "workdir": NotRequired[str]})


class CreateSecretError(TypedDict):
    error: Dict[str, Any]


class CreateSecretRequest(TypedDict):
    allowHttp: NotRequired[bool]
    hosts: List[str]
    name: str
    value: str


class CreateSessionError(TypedDict):
    error: Dict[str, Any]


class CreateSessionRequest(TypedDict):
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    shell: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class CreateSnapshotError(TypedDict):
    error: Dict[str, Any]


class CreateSnapshotRequest(TypedDict):
    expiresInSeconds: NotRequired[int]
    includeMemory: NotRequired[bool]
    name: str


class CreateTeamError(TypedDict):
    error: Dict[str, Any]


class CreateTeamRequest(TypedDict):
    id: str
    quotas: "Quotas"


class CreateVolumeError(TypedDict):
    error: Dict[str, Any]


class CreateVolumeRequest(TypedDict):
    name: str
    sizeMiB: NotRequired[int]


class CreatedKey(TypedDict):
    createdAt: str
    expiresAt: NotRequired[str]
    id: str
    key: str
    lastUsedAt: NotRequired[str]
    name: NotRequired[str]
    revokedAt: NotRequired[str]
    scopes: List[str]
    team: str


class DefaultContextError(TypedDict):
    error: Dict[str, Any]


class DeleteBackupError(TypedDict):
    error: Dict[str, Any]


class DeleteContextError(TypedDict):
    error: Dict[str, Any]


class DeleteFileError(TypedDict):
    error: Dict[str, Any]


class DeleteImageError(TypedDict):
    error: Dict[str, Any]


class DeletePoolError(TypedDict):
    error: Dict[str, Any]


class DeleteSandboxError(TypedDict):
    error: Dict[str, Any]


class DeleteSecretError(TypedDict):
    error: Dict[str, Any]


class DeleteSessionError(TypedDict):
    error: Dict[str, Any]


class DeleteSnapshotError(TypedDict):
    error: Dict[str, Any]


class DeleteTeamError(TypedDict):
    error: Dict[str, Any]


class DeleteTeamWebhookError(TypedDict):
    error: Dict[str, Any]


class DeleteVolumeError(TypedDict):
    error: Dict[str, Any]


class DesktopPoint(TypedDict):
    x: int
    y: int


class DesktopProgram(TypedDict):
    name: str
    pid: NotRequired[int]
    restarts: int
    running: bool


class DesktopStartRequest(TypedDict):
    depth: NotRequired[int]
    height: NotRequired[int]
    width: NotRequired[int]


class DesktopStatus(TypedDict):
    depth: NotRequired[int]
    display: NotRequired[str]
    height: NotRequired[int]
    novncPort: NotRequired[int]
    programs: NotRequired[List["DesktopProgram"]]
    running: bool
    startedAt: NotRequired[str]
    width: NotRequired[int]


class DesktopView(TypedDict):
    expiresAt: NotRequired[str]
    port: "Port"
    url: str


class DesktopViewRequest(TypedDict):
    expiresInSeconds: NotRequired[int]
    public: NotRequired[bool]


class DesktopWindow(TypedDict):
    focused: bool
    height: int
    id: str
    title: str
    width: int
    x: int
    y: int


class DownloadTarError(TypedDict):
    error: Dict[str, Any]


class DragMouseError(TypedDict):
    error: Dict[str, Any]


class EgressLogEntry(TypedDict):
    action: str
    bytes: int
    durationMs: float
    error: NotRequired[str]
    host: str
    method: str
    path: NotRequired[str]
    rule: int
    scheme: str
    status: int
    time: str


class EgressPolicy(TypedDict):
    cidrs: NotRequired[List[str]]
    domains: NotRequired[List[str]]
    http: NotRequired["HTTPEgress"]
    mode: Literal["allow-all", "block-all", "allow-list", "deny-list"]


class EnsureSandboxError(TypedDict):
    error: Dict[str, Any]


class ErrorBody(TypedDict):
    code: Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CPU", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PID", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "OFF_SCREEN", "PTY_EXISTS", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUN_CANCELLED", "RUNTIME_UNAVAILABLE", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SNAPSHOTS_UNSUPPORTED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "TEAMS_UNAVAILABLE", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]
    message: str
    reason: NotRequired[str]


class Event(TypedDict):
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: str
    sandboxName: NotRequired[str]
    seq: int
    state: Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]
    team: NotRequired[str]
    time: str


class EventLine(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type error."
    error: NotRequired["ErrorBody"]
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: NotRequired[str]
    sandboxName: NotRequired[str]
    seq: NotRequired[int]
    state: NotRequired[Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]]
    team: NotRequired[str]
    time: NotRequired[str]
    type: Literal["event", "heartbeat", "error"]


class ExecCommandError(TypedDict):
    error: Dict[str, Any]


class ExecEvent(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type exit or end or error."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["start", "stdout", "stderr", "exit", "end", "heartbeat", "error"]


class ExecInSessionError(TypedDict):
    error: Dict[str, Any]


class ExecRequest(TypedDict):
    cmd: NotRequired[List[str]]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    shell: NotRequired[str]
    stdin: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class ExecResult(TypedDict):
    durationMs: int
    exitCode: int
    signal: NotRequired[str]
    stderr: str
    stdout: str
    timedOut: bool
    truncated: bool


class ExposePortError(TypedDict):
    error: Dict[str, Any]


class ExposePortRequest(TypedDict):
    port: int
    public: NotRequired[bool]


class FileInfo(TypedDict):
    group: NotRequired[str]
    modTime: str
    mode: str
    name: str
    owner: NotRequired[str]
    path: str
    size: int
    target: NotRequired[str]
    type: Literal["file", "dir", "symlink", "other"]


class FocusWindowError(TypedDict):
    error: Dict[str, Any]


class ForkRequest(TypedDict):
    count: NotRequired[int]
    name: NotRequired[str]


class ForkResult(TypedDict):
    forks: List["Sandbox"]
    memory: bool
    note: NotRequired[str]


class ForkSandboxError(TypedDict):
    error: Dict[str, Any]


class GetBackupError(TypedDict):
    error: Dict[str, Any]


class GetContextError(TypedDict):
    error: Dict[str, Any]


class GetCursorPositionError(TypedDict):
    error: Dict[str, Any]


class GetDefaultContextError(TypedDict):
    error: Dict[str, Any]


class GetDesktopStatusError(TypedDict):
    error: Dict[str, Any]


class GetDesktopViewError(TypedDict):
    error: Dict[str, Any]


class GetEgressLogError(TypedDict):
    error: Dict[str, Any]


class GetHealthError(TypedDict):
    error: Dict[str, Any]


class GetImageError(TypedDict):
    error: Dict[str, Any]


class GetMetricsError(TypedDict):
    error: Dict[str, Any]


class GetNetworkError(TypedDict):
    error: Dict[str, Any]


class GetOpenAPIDocumentError(TypedDict):
    error: Dict[str, Any]


class GetPTYError(TypedDict):
    error: Dict[str, Any]


class GetParentError(TypedDict):
    error: Dict[str, Any]


class GetPoolError(TypedDict):
    error: Dict[str, Any]


class GetProcessError(TypedDict):
    error: Dict[str, Any]


class GetProcessLogsError(TypedDict):
    error: Dict[str, Any]


class GetSandboxError(TypedDict):
    error: Dict[str, Any]


class GetSandboxLogsError(TypedDict):
    error: Dict[str, Any]


class GetSandboxStatsError(TypedDict):
    error: Dict[str, Any]


class GetSessionCommandError(TypedDict):
    error: Dict[str, Any]


class GetSessionError(TypedDict):
    error: Dict[str, Any]


class GetSnapshotError(TypedDict):
    error: Dict[str, Any]


class GetTeamError(TypedDict):
    error: Dict[str, Any]


class GetTeamUsageError(TypedDict):
    error: Dict[str, Any]


class GetVolumeError(TypedDict):
    error: Dict[str, Any]


class GitAddError(TypedDict):
    error: Dict[str, Any]


class GitAddRemoteError(TypedDict):
    error: Dict[str, Any]


class GitAddRemoteRequest(TypedDict):
    fetch: NotRequired[bool]
    name: str
    overwrite: NotRequired[bool]
    path: str
    url: str


class GitAddRequest(TypedDict):
    files: List[str]
    path: str


class GitBranchRequest(TypedDict):
    name: str
    path: str


class GitBranches(TypedDict):
    current: str
    local: List[str]
    remote: List[str]


class GitBranchesError(TypedDict):
    error: Dict[str, Any]


class GitCheckoutError(TypedDict):
    error: Dict[str, Any]


class GitCheckoutRequest(TypedDict):
    branch: str
    create: NotRequired[bool]
    force: NotRequired[bool]
    path: str


class GitCloneError(TypedDict):
    error: Dict[str, Any]


class GitCloneRequest(TypedDict):
    branch: NotRequired[str]
    commit: NotRequired[str]
    depth: NotRequired[int]
    path: NotRequired[str]
    storeCredentials: NotRequired[bool]
    timeoutSeconds: NotRequired[int]
    token: NotRequired[str]
    url: str
    username: NotRequired[str]


class GitCommit(TypedDict):
    authorEmail: str
    authorName: str
    hash: str
    message: str
    time: str


class GitCommitError(TypedDict):
    error: Dict[str, Any]


class GitCommitRequest(TypedDict):
    all: NotRequired[bool]
    allowEmpty: NotRequired[bool]
    authorEmail: NotRequired[str]
    authorName: NotRequired[str]
    message: str
    path: str


class GitDeleteBranchError(TypedDict):
    error: Dict[str, Any]


class GitFileStatus(TypedDict):
    path: str
    staging: str
    worktree: str


class GitInitError(TypedDict):
    error: Dict[str, Any]


class GitInitRequest(TypedDict):
    bare: NotRequired[bool]
    initialBranch: NotRequired[str]
    path: str


class GitLogError(TypedDict):
    error: Dict[str, Any]


class GitLogRequest(TypedDict):
    limit: NotRequired[int]
    path: str


class GitPullError(TypedDict):
    error: Dict[str, Any]


class GitPushError(TypedDict):
    error: Dict[str, Any]


class GitRemote(TypedDict):
    name: str
    url: str


class GitRemotesError(TypedDict):
    error: Dict[str, Any]


class GitRepoRequest(TypedDict):
    path: NotRequired[str]


class GitResetError(TypedDict):
    error: Dict[str, Any]


class GitResetRequest(TypedDict):
    files: NotRequired[List[str]]
    mode: NotRequired[str]
    path: str
    target: NotRequired[str]


class GitRestoreError(TypedDict):
    error: Dict[str, Any]


class GitRestoreRequest(TypedDict):
    files: List[str]
    path: str
    staged: NotRequired[bool]
    worktree: NotRequired[bool]


class GitStatus(TypedDict):
    ahead: int
    behind: int
    branch: str
    clean: bool
    files: List["GitFileStatus"]
    head: str
    path: str
    upstream: NotRequired[str]


class GitStatusError(TypedDict):
    error: Dict[str, Any]


class GitSyncRequest(TypedDict):
    branch: NotRequired[str]
    force: NotRequired[bool]
    path: str
    remote: NotRequired[str]
    setUpstream: NotRequired[bool]
    timeoutSeconds: NotRequired[int]
    token: NotRequired[str]
    username: NotRequired[str]


class GitSyncResult(TypedDict):
    branch: str
    head: str
    upToDate: bool


class GlobFilesError(TypedDict):
    error: Dict[str, Any]


class GlobRequest(TypedDict):
    max: NotRequired[int]
    path: str
    pattern: str


class GlobResult(TypedDict):
    files: List[str]
    truncated: bool


class GrepFilesError(TypedDict):
    error: Dict[str, Any]


class GrepMatch(TypedDict):
    content: str
    file: str
    line: int


class GrepRequest(TypedDict):
    max: NotRequired[int]
    path: str
    pattern: str


class GrepResult(TypedDict):
    matches: List["GrepMatch"]
    truncated: bool


class HTTPEgress(TypedDict):
    rules: List["HTTPRule"]


class HTTPForwardTo(TypedDict):
    body: NotRequired[bool]
    failOpen: NotRequired[bool]
    timeoutSeconds: NotRequired[int]
    url: str


class HTTPInject(TypedDict):
    header: str
    prefix: NotRequired[str]
    secret: str


class HTTPRewrite(TypedDict):
    host: NotRequired[str]
    pathPrefix: NotRequired[str]
    scheme: NotRequired[str]


class HTTPRule(TypedDict):
    action: str
    forward: NotRequired["HTTPForwardTo"]
    host: str
    inject: NotRequired[List["HTTPInject"]]
    method: NotRequired[str]
    pathPrefix: NotRequired[str]
    rewrite: NotRequired["HTTPRewrite"]


class Image(TypedDict):
    config: NotRequired["ImageConfig"]
    createdAt: str
    id: str
    layers: int
    name: str
    sizeBytes: int
    source: str
    team: NotRequired[str]


class ImageConfig(TypedDict):
    cmd: NotRequired[List[str]]
    entrypoint: NotRequired[List[str]]
    env: NotRequired[List[str]]
    labels: NotRequired[Dict[str, str]]
    user: NotRequired[str]
    workingDir: NotRequired[str]


class ImportImageError(TypedDict):
    error: Dict[str, Any]


class KillPTYError(TypedDict):
    error: Dict[str, Any]


class KillProcessError(TypedDict):
    error: Dict[str, Any]


class LaunchApplicationError(TypedDict):
    error: Dict[str, Any]


class LaunchRequest(TypedDict):
    cmd: NotRequired[List[str]]
    env: NotRequired[Dict[str, str]]
    shell: NotRequired[str]
    user: NotRequired[str]


class ListAncestorsError(TypedDict):
    error: Dict[str, Any]


class ListAuditError(TypedDict):
    error: Dict[str, Any]


class ListBackupsError(TypedDict):
    error: Dict[str, Any]


class ListContextsError(TypedDict):
    error: Dict[str, Any]


class ListEventsError(TypedDict):
    error: Dict[str, Any]


class ListFilesError(TypedDict):
    error: Dict[str, Any]


class ListForksError(TypedDict):
    error: Dict[str, Any]


class ListImagesError(TypedDict):
    error: Dict[str, Any]


class ListKeysError(TypedDict):
    error: Dict[str, Any]


class ListPTYsError(TypedDict):
    error: Dict[str, Any]


class ListPoolsError(TypedDict):
    error: Dict[str, Any]


class ListPortsError(TypedDict):
    error: Dict[str, Any]


class ListProcessesError(TypedDict):
    error: Dict[str, Any]


class ListSSHAccessError(TypedDict):
    error: Dict[str, Any]


class ListSandboxEventsError(TypedDict):
    error: Dict[str, Any]


class ListSandboxesError(TypedDict):
    error: Dict[str, Any]


class ListSecretsError(TypedDict):
    error: Dict[str, Any]


class ListSessionCommandsError(TypedDict):
    error: Dict[str, Any]


class ListSessionsError(TypedDict):
    error: Dict[str, Any]


class ListSnapshotsError(TypedDict):
    error: Dict[str, Any]


class ListTeamsError(TypedDict):
    error: Dict[str, Any]


class ListVolumesError(TypedDict):
    error: Dict[str, Any]


class ListWindowsError(TypedDict):
    error: Dict[str, Any]


class LogLine(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type end or error."
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    offset: NotRequired[int]
    type: Literal["data", "heartbeat", "end", "error"]


class LogMatch(TypedDict):
    line: str
    seq: int
    stream: Literal["stdout", "stderr"]


class LookupUserError(TypedDict):
    error: Dict[str, Any]


class MakeDirectoryError(TypedDict):
    error: Dict[str, Any]


class MkdirRequest(TypedDict):
    mode: NotRequired[str]
    parents: NotRequired[bool]
    path: str


class MountBucketError(TypedDict):
    error: Dict[str, Any]


class MouseClickRequest(TypedDict):
    button: NotRequired[str]
    double: NotRequired[bool]
    x: NotRequired[int]
    y: NotRequired[int]


MouseDragRequest = TypedDict("MouseDragRequest", {"button": NotRequired[str], "from": "DesktopPoint", "to": "DesktopPoint"})


class MouseMoveRequest(TypedDict):
    x: int
    y: int


class MouseScrollRequest(TypedDict):
    amount: NotRequired[int]
    direction: str
    x: NotRequired[int]
    y: NotRequired[int]


class MoveFileError(TypedDict):
    error: Dict[str, Any]


class MoveMouseError(TypedDict):
    error: Dict[str, Any]


MoveRequest = TypedDict("MoveRequest", {"from": str, "overwrite": NotRequired[bool], "to": str})


class NetworkInfo(TypedDict):
    address: NotRequired[str]
    egress: NotRequired["EgressPolicy"]
    gateway: NotRequired[str]
    mode: Literal["bridge", "none"]


class None(TypedDict):
    pass


class PTY(TypedDict):
    attached: int
    cmd: List[str]
    cols: int
    createdAt: str
    cwd: str
    endedAt: NotRequired[str]
    exitCode: NotRequired[int]
    handle: NotRequired[str]
    id: str
    pid: int
    rows: int
    signal: NotRequired[str]
    state: Literal["running", "exited"]


class PTYControl(TypedDict):
    cols: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    rows: NotRequired[int]
    signal: NotRequired[str]
    type: Literal["resize", "exit"]


class PauseSandboxError(TypedDict):
    error: Dict[str, Any]


class PermissionsRequest(TypedDict):
    group: NotRequired[str]
    mode: NotRequired[str]
    owner: NotRequired[str]
    path: str


class Pool(TypedDict):
    adopted: int
    createdAt: str
    max: int
    min: int
    missed: int
    name: str
    ready: int
    starting: int
    target: int
    template: "PoolTemplate"


PoolTemplate = TypedDict("PoolTemplate", {"class": NotRequired[str], "cpu": NotRequired[float], "diskMiB": NotRequired[int], "egress": NotRequired["EgressPolicy"], "env": NotRequired[Dict[str, str]], "image": NotRequired[str], "memoryMiB": NotRequired[int], "network": NotRequired[str], "pidsLimit": NotRequired[int], "workdir": NotRequired[str]})


class Port(TypedDict):
    createdAt: str
    hostUrl: NotRequired[str]
    pathUrl: str
    port: int
    public: bool
    token: str
    url: str


class PortReady(TypedDict):
    elapsedMs: int
    port: int
    status: NotRequired[int]


class PressKeyError(TypedDict):
    error: Dict[str, Any]


class PressKeyRequest(TypedDict):
    key: str


class PreviewDeleteError(TypedDict):
    error: Dict[str, Any]


class PreviewGetError(TypedDict):
    error: Dict[str, Any]


class PreviewPatchError(TypedDict):
    error: Dict[str, Any]


class PreviewPostError(TypedDict):
    error: Dict[str, Any]


class PreviewPutError(TypedDict):
    error: Dict[str, Any]


class Process(TypedDict):
    cmd: List[str]
    cwd: str
    endedAt: NotRequired[str]
    exitCode: NotRequired[int]
    handle: NotRequired[str]
    id: str
    lastSeq: int
    pid: int
    signal: NotRequired[str]
    startedAt: str
    state: Literal["running", "exited"]
    stdinOpen: bool
    timedOut: bool


class PullImageError(TypedDict):
    error: Dict[str, Any]


class PullRequest(TypedDict):
    name: NotRequired[str]
    ref: str


class Quotas(TypedDict):
    cpu: NotRequired[float]
    diskMiB: NotRequired[int]
    maxRunning: NotRequired[int]
    maxSandboxes: NotRequired[int]
    maxSnapshots: NotRequired[int]
    memoryMiB: NotRequired[int]


class ReadFileError(TypedDict):
    error: Dict[str, Any]


class ReplaceInFilesError(TypedDict):
    error: Dict[str, Any]


class ReplaceRequest(TypedDict):
    files: List[str]
    new: str
    old: str


class ReplaceResult(TypedDict):
    error: NotRequired[str]
    file: str
    replaced: int


class ResizePTYError(TypedDict):
    error: Dict[str, Any]


class ResizeRequest(TypedDict):
    cols: int
    rows: int


class RestoreBackupError(TypedDict):
    error: Dict[str, Any]


class RestoreBackupRequest(TypedDict):
    path: NotRequired[str]
    sandbox: str


class ResumeSandboxError(TypedDict):
    error: Dict[str, Any]


class RevokeKeyError(TypedDict):
    error: Dict[str, Any]


class RevokeSSHAccessError(TypedDict):
    error: Dict[str, Any]


class RunCodeError(TypedDict):
    error: Dict[str, Any]


class RunCodeInContextError(TypedDict):
    error: Dict[str, Any]


class RunCodeRequest(TypedDict):
    code: str
    env: NotRequired[Dict[str, str]]
    timeoutSeconds: NotRequired[float]


class RunEvent(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type end or error."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["stdout", "stderr", "result", "error", "heartbeat", "end"]


class RunRequest(TypedDict):
    code: str
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    language: str
    timeoutSeconds: NotRequired[float]


class RunResult(TypedDict):
    durationMs: int
    error: NotRequired["CodeError"]
    results: List["CodeResult"]
    stderr: str
    stdout: str
    timedOut: bool
    truncated: bool


class RunSessionCommandError(TypedDict):
    error: Dict[str, Any]


class SSHAccess(TypedDict):
    command: NotRequired[str]
    createdAt: str
    expiresAt: NotRequired[str]
    fingerprint: NotRequired[str]
    host: NotRequired[str]
    hostKey: NotRequired[str]
    id: str
    port: NotRequired[int]
    publicKey: NotRequired[str]
    sandboxId: str
    token: NotRequired[str]


Sandbox = TypedDict("Sandbox", {"autoArchiveSeconds": int, "autoDeleteSeconds": int, "autoPauseSeconds": int, "autoStopSeconds": int, "buckets": NotRequired[List["BucketMount"]], "class": Literal["container", "gvisor"], "cpu": float, "createdAt": str, "diskMiB": int, "egress": NotRequired["EgressPolicy"], "entrypoint": NotRequired[List[str]], "env": NotRequired[Dict[str, str]], "ephemeral": bool, "error": NotRequired[str], "expiresAction": NotRequired[Literal["stop", "pause", "archive", "delete"]], "expiresAt": NotRequired[str], "id": str, "image": str, "keepAlive": bool, "labels": Dict[str, str], "lastActivityAt": NotRequired[str], "memoryMiB": int, "name": NotRequired[str], "network": NotRequired[Literal["bridge", "none"]], "parent": NotRequired[str], "pidsLimit": int, "reason": NotRequired[str], "restartPolicy": NotRequired[Literal["never", "on-failure", "always"]], "snapshot": NotRequired[str], "startedAt": NotRequired[str], "state": Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"], "stoppedAt": NotRequired[str], "team": NotRequired[str], "ttlFrom": NotRequired[str], "ttlSeconds": int, "volumes": NotRequired[List["VolumeMount"]], "workdir": str})


class SandboxStats(TypedDict):
    cpuNanos: int
    cpuPercent: NotRequired[float]
    diskBytes: int
    diskLimitBytes: int
    id: str
    memoryBytes: int
    memoryLimitBytes: int
    name: NotRequired[str]
    netRxBytes: int
    netTxBytes: int
    pids: int
    pidsLimit: int
    state: Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]
    time: str


class ScrollMouseError(TypedDict):
    error: Dict[str, Any]


class SecretHosts(TypedDict):
    allowHttp: NotRequired[bool]
    hosts: List[str]


class SecretInfo(TypedDict):
    allowHttp: NotRequired[bool]
    createdAt: str
    hosts: List[str]
    name: str
    size: int
    team: str


class SendSessionCommandInputError(TypedDict):
    error: Dict[str, Any]


class Session(TypedDict):
    createdAt: str
    env: NotRequired[Dict[str, str]]
    exitCode: NotRequired[int]
    handle: NotRequired[str]
    id: str
    lastUsedAt: str
    pid: int
    shell: str
    state: Literal["idle", "busy", "ended"]
    timeoutSeconds: NotRequired[float]


class SessionCommand(TypedDict):
    command: str
    exitCode: NotRequired[int]
    id: str
    logs: NotRequired["SessionLogs"]


class SessionCommandLogsError(TypedDict):
    error: Dict[str, Any]


class SessionEvent(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type exit or end or error."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    sessionEnded: NotRequired[bool]
    shellRestarted: NotRequired[bool]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["start", "stdout", "stderr", "exit", "end", "heartbeat", "error"]


class SessionExecRequest(TypedDict):
    command: str
    timeoutSeconds: NotRequired[float]


class SessionExecResult(TypedDict):
    durationMs: int
    exitCode: int
    sessionEnded: bool
    shellRestarted: bool
    stderr: str
    stdout: str
    timedOut: bool
    truncated: bool


class SessionInput(TypedDict):
    data: str


class SessionLogEvent(TypedDict):
    data: NotRequired[str]
    exitCode: int
    type: str


class SessionLogs(TypedDict):
    output: str
    stderr: str
    stdout: str
    truncated: bool


SessionRunRequest = TypedDict("SessionRunRequest", {"async": NotRequired[bool], "command": str, "echo": NotRequired[bool], "timeoutSeconds": NotRequired[float]})


class SetEgressError(TypedDict):
    error: Dict[str, Any]


class SetFilePermissionsError(TypedDict):
    error: Dict[str, Any]


class SetSecretHostsError(TypedDict):
    error: Dict[str, Any]


class SetTeamQuotasError(TypedDict):
    error: Dict[str, Any]


class SetTeamWebhookError(TypedDict):
    error: Dict[str, Any]


class SignPortRequest(TypedDict):
    expiresInSeconds: NotRequired[int]
    port: int


class SignPreviewURLError(TypedDict):
    error: Dict[str, Any]


class SignalProcessError(TypedDict):
    error: Dict[str, Any]


class SignalRequest(TypedDict):
    signal: NotRequired[str]


class SignedURL(TypedDict):
    expiresAt: str
    url: str


Snapshot = TypedDict("Snapshot", {"class": Literal["container", "gvisor"], "createdAt": str, "expiresAt": NotRequired[str], "expiresInSeconds": int, "image": str, "memory": bool, "name": str, "sandbox": str, "sizeBytes": int})


class StartDesktopError(TypedDict):
    error: Dict[str, Any]


class StartProcessError(TypedDict):
    error: Dict[str, Any]


class StartProcessRequest(TypedDict):
    cmd: NotRequired[List[str]]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    shell: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class StartSandboxError(TypedDict):
    error: Dict[str, Any]


class StatFileError(TypedDict):
    error: Dict[str, Any]


class StopDesktopError(TypedDict):
    error: Dict[str, Any]


class StopSandboxError(TypedDict):
    error: Dict[str, Any]


class TakeScreenshotError(TypedDict):
    error: Dict[str, Any]


class Team(TypedDict):
    createdAt: str
    id: str
    quotas: "Quotas"


class TeamUsage(TypedDict):
    cpu: float
    diskMiB: int
    memoryMiB: int
    quotas: "Quotas"
    running: int
    sandboxes: int
    snapshots: int
    team: str


class TeamWebhook(TypedDict):
    secret: NotRequired[str]
    url: str


class TypeTextError(TypedDict):
    error: Dict[str, Any]


class TypeTextRequest(TypedDict):
    delayMs: NotRequired[int]
    text: str


class UnexposePortError(TypedDict):
    error: Dict[str, Any]


class UnmountBucketError(TypedDict):
    error: Dict[str, Any]


class UpdatePoolError(TypedDict):
    error: Dict[str, Any]


class UpdatePoolRequest(TypedDict):
    max: NotRequired[int]
    min: NotRequired[int]


class UpdateSandboxError(TypedDict):
    error: Dict[str, Any]


class UpdateSandboxRequest(TypedDict):
    autoArchiveSeconds: NotRequired[int]
    autoDeleteSeconds: NotRequired[int]
    autoPauseSeconds: NotRequired[int]
    autoStopSeconds: NotRequired[int]
    cpu: NotRequired[float]
    env: NotRequired[Dict[str, str]]
    ephemeral: NotRequired[bool]
    keepAlive: NotRequired[bool]
    labels: NotRequired[Dict[str, str]]
    memoryMiB: NotRequired[int]
    pidsLimit: NotRequired[int]
    ttlSeconds: NotRequired[int]


class UploadTarError(TypedDict):
    error: Dict[str, Any]


class User(TypedDict):
    gid: int
    home: str
    name: str
    uid: int


class Volume(TypedDict):
    createdAt: str
    name: str
    sizeMiB: int
    team: NotRequired[str]
    usedBy: List[str]
    usedMiB: int


class VolumeMount(TypedDict):
    name: str
    path: str
    readOnly: NotRequired[bool]


class WaitForLogRequest(TypedDict):
    regex: NotRequired[str]
    stream: NotRequired[Literal["stdout", "stderr"]]
    substring: NotRequired[str]
    timeoutSeconds: NotRequired[float]


class WaitForPortRequest(TypedDict):
    path: NotRequired[str]
    port: int
    protocol: NotRequired[Literal["tcp", "http"]]
    status: NotRequired[int]
    timeoutSeconds: NotRequired[float]


class WaitForProcessLogError(TypedDict):
    error: Dict[str, Any]


class WaitForProcessPortError(TypedDict):
    error: Dict[str, Any]


class WaitProcessError(TypedDict):
    error: Dict[str, Any]


class WaitSandboxError(TypedDict):
    error: Dict[str, Any]


class WatchEvent(TypedDict):
    "One line of an NDJSON stream. A stream ends after an event of type error."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["ready", "create", "write", "remove", "rename", "overflow", "heartbeat", "error"]


class WatchFilesError(TypedDict):
    error: Dict[str, Any]


class WriteFileError(TypedDict):
    error: Dict[str, Any]


class WriteProcessStdinError(TypedDict):
    error: Dict[str, Any]
