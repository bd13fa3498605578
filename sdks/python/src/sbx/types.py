"""Types of the sbx API, generated from sdks/openapi.json by gen_types.py; do not edit."""

from typing import Any, Dict, List, Literal, NotRequired, Optional, TypedDict, Union


class APIKey(TypedDict):
    "APIKey describes a key; its secret is shown only once, in CreatedKey."
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
    "AuditEntry is one mutating request as the audit log keeps it."
    code: NotRequired[Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_EXISTS", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_CPU", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PID", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "LSP_FAILED", "LSP_LIMIT", "LSP_NOT_STARTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "OFF_SCREEN", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "PTY_EXISTS", "PTY_EXITED", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "RECORDING_ACTIVE", "RECORDING_NOT_ACTIVE", "RECORDING_NOT_FOUND", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUNTIME_UNAVAILABLE", "RUN_CANCELLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOTS_UNSUPPORTED", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAMS_UNAVAILABLE", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]]
    keyId: str
    method: str
    path: str
    requestId: NotRequired[str]
    seq: int
    status: int
    team: str
    time: str


class Backup(TypedDict):
    "Backup is a directory of a sandbox packed into the daemon's blob store (POST /v1/sandboxes/{id}/backups); restore it into any sandbox."
    createdAt: str
    expiresAt: NotRequired[str]
    id: str
    name: NotRequired[str]
    path: str
    sandbox: str
    sha256: str
    sizeBytes: int


class BucketMount(TypedDict):
    "BucketMount mounts an S3 bucket, or a prefix of one, at Path inside a sandbox (CreateSandboxRequest.Buckets). The daemon mounts it on the host with s3fs; the keys stay on the host and are never returned."
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
    "BuildCopy copies context files into the image."
    dest: str
    src: List[str]


BuildEvent = Union["BuildEventPull", "BuildEventStep", "BuildEventOutput", "BuildEventLayer", "BuildEventDone", "BuildEventError", "BuildEventHeartbeat"]


class BuildEventDone(TypedDict):
    "One BuildEvent whose type is \"done\"."
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
    type: Literal["done"]


class BuildEventError(TypedDict):
    "One BuildEvent whose type is \"error\"."
    cached: NotRequired[bool]
    data: NotRequired[str]
    error: "ErrorBody"
    exitCode: NotRequired[int]
    image: NotRequired["Image"]
    instruction: NotRequired[str]
    layer: NotRequired[str]
    line: NotRequired[int]
    output: NotRequired[str]
    step: NotRequired[int]
    stream: NotRequired[str]
    total: NotRequired[int]
    type: Literal["error"]


class BuildEventFields(TypedDict):
    "BuildEvent is one line of a build's progress. Type is: - \"pull\": the FROM image (Instruction) is being pulled from its registry, or was (Data says which), as sbx had no image of that name; - \"step\": step Step of Total begins (Instruction, Line); Cached says the cache had its result and nothing runs; - \"output\": a chunk of a RUN step's output (Stream \"stdout\"/\"stderr\", Data); - \"layer\": the step made Layer; - \"done\": the image is stored (Image) \u2014 the last event of a success; - \"error\": the build failed (Error; for a failed RUN, ExitCode and the step's last Output) \u2014 the last event of a failure. No image is stored; - \"heartbeat\": nothing happened for 15 s."
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
    type: Literal["pull", "step", "output", "layer", "done", "error", "heartbeat"]


class BuildEventHeartbeat(TypedDict):
    "One BuildEvent whose type is \"heartbeat\"."
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
    type: Literal["heartbeat"]


class BuildEventLayer(TypedDict):
    "One BuildEvent whose type is \"layer\"."
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
    type: Literal["layer"]


class BuildEventOutput(TypedDict):
    "One BuildEvent whose type is \"output\"."
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
    type: Literal["output"]


class BuildEventPull(TypedDict):
    "One BuildEvent whose type is \"pull\"."
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
    type: Literal["pull"]


class BuildEventStep(TypedDict):
    "One BuildEvent whose type is \"step\"."
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
    type: Literal["step"]


class BuildImageError(TypedDict):
    error: Dict[str, Any]


class BuildImageFromStepsError(TypedDict):
    error: Dict[str, Any]


BuildRequest = TypedDict("BuildRequest", {"buildArgs": NotRequired[Dict[str, str]], "files": NotRequired[Dict[str, str]], "from": str, "name": str, "noCache": NotRequired[bool], "steps": List["BuildStep"], "timeoutSeconds": NotRequired[int]})


class BuildStep(TypedDict):
    "BuildStep is one step of the JSON form: exactly one field is set. Values are taken literally (no $VARIABLE expansion)."
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


class CloseLanguageServerDocumentError(TypedDict):
    error: Dict[str, Any]


class CloseProcessStdinError(TypedDict):
    error: Dict[str, Any]


class CodeError(TypedDict):
    "CodeError is an exception raised by the code: its class name, its message and the traceback as the interpreter prints it. In a RunEvent of type \"error\", Code and Message are set instead when the stream itself broke."
    code: NotRequired[Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_EXISTS", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_CPU", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PID", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "LSP_FAILED", "LSP_LIMIT", "LSP_NOT_STARTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "OFF_SCREEN", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "PTY_EXISTS", "PTY_EXITED", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "RECORDING_ACTIVE", "RECORDING_NOT_ACTIVE", "RECORDING_NOT_FOUND", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUNTIME_UNAVAILABLE", "RUN_CANCELLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOTS_UNSUPPORTED", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAMS_UNAVAILABLE", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]]
    message: NotRequired[str]
    name: NotRequired[str]
    traceback: NotRequired[str]
    value: NotRequired[str]


CodeResult = TypedDict("CodeResult", {"application/json": NotRequired[Any], "image/jpeg": NotRequired[str], "image/png": NotRequired[str], "image/svg+xml": NotRequired[str], "main": NotRequired[bool], "text/html": NotRequired[str], "text/markdown": NotRequired[str], "text/plain": NotRequired[str]})


class Context(TypedDict):
    "Context is a live interpreter in a sandbox."
    contextIdleSeconds: int
    createdAt: str
    cwd: str
    expiresAt: NotRequired[str]
    handle: NotRequired[str]
    id: str
    language: str
    lastUsedAt: str
    pid: int
    runs: int


class CreateBackupError(TypedDict):
    error: Dict[str, Any]


class CreateBackupRequest(TypedDict):
    "CreateBackupRequest is the body of POST /v1/sandboxes/{id}/backups."
    expiresInSeconds: NotRequired[int]
    name: NotRequired[str]
    path: str


class CreateContextError(TypedDict):
    error: Dict[str, Any]


class CreateContextRequest(TypedDict):
    "CreateContextRequest is the body of POST /v1/sandboxes/{id}/contexts."
    contextIdleSeconds: NotRequired[int]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    language: str


class CreateKeyError(TypedDict):
    error: Dict[str, Any]


class CreateKeyRequest(TypedDict):
    "CreateKeyRequest asks for a new API key. Team defaults to the caller's."
    name: NotRequired[str]
    scopes: List[str]
    team: NotRequired[str]
    ttlSeconds: NotRequired[int]


class CreatePTYError(TypedDict):
    error: Dict[str, Any]


class CreatePTYRequest(TypedDict):
    "CreatePTYRequest starts a program on a new terminal (POST \u2026/ptys)."
    cmd: NotRequired[List[str]]
    cols: NotRequired[int]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    rows: NotRequired[int]
    user: NotRequired[str]


class CreatePoolError(TypedDict):
    error: Dict[str, Any]


class CreatePoolRequest(TypedDict):
    "CreatePoolRequest makes a warm pool. Min instances are kept ready; after a burst of creates the pool grows towards Max (see Pool.Target)."
    max: NotRequired[int]
    min: int
    name: str
    template: "PoolTemplate"


class CreateSSHAccessError(TypedDict):
    error: Dict[str, Any]


class CreateSSHAccessRequest(TypedDict):
    "CreateSSHAccessRequest is the body of POST /v1/sandboxes/{id}/ssh-access: a token that expires (the SSH user name), or, with PublicKey, a key that logs in as the sandbox's id."
    expiresInSeconds: NotRequired[int]
    publicKey: NotRequired[str]


class CreateSandboxError(TypedDict):
    error: Dict[str, Any]


CreateSandboxRequest = TypedDict("CreateSandboxRequest", {"autoArchiveSeconds": NotRequired[int], "autoDeleteSeconds": NotRequired[int], "autoPauseSeconds": NotRequired[int], "autoStopSeconds": NotRequired[int], "buckets": NotRequired[List["BucketMount"]], "class": NotRequired[Literal["container", "gvisor"]], "cpu": NotRequired[float], "diskMiB": NotRequired[int], "egress": NotRequired["EgressPolicy"], "entrypoint": NotRequired[List[str]], "env": NotRequired[Dict[str, str]], "ephemeral": NotRequired[bool], "ignoreImageEntrypoint": NotRequired[bool], "image": NotRequired[str], "keepAlive": NotRequired[bool], "labels": NotRequired[Dict[str, str]], "memoryMiB": NotRequired[int], "name": NotRequired[str], "network": NotRequired[Literal["bridge", "none"]], "pidsLimit": NotRequired[int], "pool": NotRequired[str], "restartPolicy": NotRequired[Literal["never", "on-failure", "always"]], "snapshot": NotRequired[str], "ttlSeconds": NotRequired[int], "volumes": NotRequired[List["VolumeMount"]], "workdir": NotRequired[str]})


class CreateSecretError(TypedDict):
    error: Dict[str, Any]


class CreateSecretRequest(TypedDict):
    "CreateSecretRequest is the body of POST /v1/secrets. Name: 1 to 64 of A-Z, a-z, 0-9, '_', '-', '.'; Value at most 16 KiB. The value is kept encrypted and never returned."
    allowHttp: NotRequired[bool]
    hosts: List[str]
    name: str
    value: str


class CreateSessionError(TypedDict):
    error: Dict[str, Any]


class CreateSessionRequest(TypedDict):
    "CreateSessionRequest starts a persistent shell (POST \u2026/sessions)."
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    shell: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class CreateSnapshotError(TypedDict):
    error: Dict[str, Any]


class CreateSnapshotRequest(TypedDict):
    "CreateSnapshotRequest is the body of POST /v1/sandboxes/{id}/snapshots."
    expiresInSeconds: NotRequired[int]
    includeMemory: NotRequired[bool]
    name: str


class CreateTeamError(TypedDict):
    error: Dict[str, Any]


class CreateTeamRequest(TypedDict):
    "CreateTeamRequest makes a team (PUT /v1/teams/{id} sets the quotas of an existing one)."
    id: str
    quotas: "Quotas"


class CreateVolumeError(TypedDict):
    error: Dict[str, Any]


class CreateVolumeRequest(TypedDict):
    "CreateVolumeRequest is the body of POST /v1/volumes."
    name: str
    sizeMiB: NotRequired[int]


class CreatedKey(TypedDict):
    "CreatedKey is a new key with its secret: store it now, it is not shown again."
    createdAt: str
    expiresAt: NotRequired[str]
    id: str
    key: str
    lastUsedAt: NotRequired[str]
    name: NotRequired[str]
    revokedAt: NotRequired[str]
    scopes: List[str]
    team: str


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


class DeleteRecordingError(TypedDict):
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
    "DesktopPoint is a position on the screen, in pixels from the top left."
    x: int
    y: int


class DesktopProgram(TypedDict):
    "DesktopProgram is one supervised program of a desktop."
    name: str
    pid: NotRequired[int]
    restarts: int
    running: bool


class DesktopProgramLogs(TypedDict):
    "DesktopProgramLogs is a desktop program's output since it last started (the last MiB of each stream)."
    stderr: str
    stdout: str


class DesktopStartRequest(TypedDict):
    "DesktopStartRequest is the body of POST \u2026/desktop/start. Zero values take the defaults (1280\u00d7800, depth 24). Starting a running desktop with the same size is a no-op; another size is 409 DESKTOP_RUNNING."
    depth: NotRequired[int]
    height: NotRequired[int]
    width: NotRequired[int]


class DesktopStatus(TypedDict):
    "DesktopStatus describes a sandbox's desktop (start, stop, status)."
    depth: NotRequired[int]
    display: NotRequired[str]
    height: NotRequired[int]
    novncPort: NotRequired[int]
    programs: NotRequired[List["DesktopProgram"]]
    running: bool
    startedAt: NotRequired[str]
    width: NotRequired[int]


class DesktopView(TypedDict):
    "DesktopView is the noVNC page of a desktop: open URL in a browser or an iframe; it connects by itself."
    expiresAt: NotRequired[str]
    port: "Port"
    url: str


class DesktopViewRequest(TypedDict):
    "DesktopViewRequest makes the noVNC view reachable (POST \u2026/desktop/view). Private by default: the URL carries the port's token, or a signature when ExpiresInSeconds is set."
    expiresInSeconds: NotRequired[int]
    public: NotRequired[bool]


class DesktopWindow(TypedDict):
    "DesktopWindow is a top-level window on the desktop."
    focused: bool
    height: int
    id: str
    title: str
    width: int
    x: int
    y: int


class DownloadRecordingError(TypedDict):
    error: Dict[str, Any]


class DownloadTarError(TypedDict):
    error: Dict[str, Any]


class DragMouseError(TypedDict):
    error: Dict[str, Any]


class EgressLogEntry(TypedDict):
    "EgressLogEntry is one line of a sandbox's HTTP egress log: a request the proxy saw (or, for HTTPS it passed through untouched, the connection: method \"TLS\", the SNI as host, action \"passthrough\")."
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
    "EgressPolicy says what a sandbox may connect to. CIDRs are IPv4 addresses or prefixes; Domains are DNS names, \"example.com\" for that name only or \"*.example.com\" for every name below it. Domain rules follow the name's addresses as the sandbox resolves it through sbx's DNS server."
    cidrs: NotRequired[List[str]]
    domains: NotRequired[List[str]]
    http: NotRequired["HTTPEgress"]
    mode: Literal["allow-all", "block-all", "allow-list", "deny-list"]


class EnsureContextError(TypedDict):
    error: Dict[str, Any]


class EnsureSandboxError(TypedDict):
    error: Dict[str, Any]


class ErrorBody(TypedDict):
    "ErrorBody is the body of every error response: {\"error\": {...}}."
    code: Literal["ADDRESS_TAKEN", "AGENT_ERROR", "AGENT_NOT_READY", "AGENT_NOT_SUSPENDED", "AGENT_RESPONSE_TOO_LARGE", "AGENT_SOCKET_INVALID", "AGENT_UNAVAILABLE", "ARCHIVE_UNAVAILABLE", "BACKUP_CORRUPT", "BACKUP_NOT_FOUND", "BACKUP_TARGET_NOT_EMPTY", "BLOB_CORRUPT", "BLOB_NOT_FOUND", "BLOB_STORE_UNAVAILABLE", "BODY_TOO_LARGE", "BRIDGE_CONFLICT", "BRIDGE_IN_USE", "BUCKET_MOUNT_EXISTS", "BUCKET_MOUNT_NOT_FOUND", "BUILD_CONTEXT_INVALID", "BUILD_FAILED", "BUSY", "BUSYBOX_MISSING", "CANCELLED", "CHECKPOINT_REFUSED", "CLASS_MISMATCH", "CLASS_UNAVAILABLE", "COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "CONTEXT_EXISTS", "CONTEXT_NOT_FOUND", "CROSS_DEVICE", "CWD_NOT_FOUND", "DAEMON_STOPPING", "DESKTOP_NOT_RUNNING", "DESKTOP_RUNNING", "DESKTOP_UNAVAILABLE", "DIR_NOT_EMPTY", "DISK_BUSY", "DISK_UNSUPPORTED", "DOCKERFILE_INVALID", "DOCKERFILE_UNSUPPORTED", "FEATURE_UNSUPPORTED", "FILE_EXISTS", "FILE_NOT_FOUND", "GIT_AUTH_FAILED", "GIT_BRANCH_NOT_FOUND", "GIT_CONFLICT", "GIT_FAILED", "GIT_NOT_A_REPOSITORY", "GIT_REMOTE_NOT_FOUND", "GIT_REMOTE_UNREACHABLE", "ID_TAKEN", "IMAGE_AND_SNAPSHOT", "IMAGE_IN_USE", "IMAGE_NOT_FOUND", "INSTANCE_EXISTS", "INSTANCE_LOST", "INSTANCE_NOT_FOUND", "INSUFFICIENT_STORAGE", "INTERNAL", "INTERPRETER_FAILED", "INVALID_BACKUP", "INVALID_BLOB_DIR", "INVALID_BLOB_KEY", "INVALID_BLOB_URL", "INVALID_BRIDGE", "INVALID_BUCKET_MOUNT", "INVALID_CHECKPOINT", "INVALID_CLASS", "INVALID_COMMAND", "INVALID_COUNT", "INVALID_CPU", "INVALID_DB_PATH", "INVALID_DEPTH", "INVALID_DESKTOP_INPUT", "INVALID_DISK", "INVALID_EGRESS", "INVALID_ENTRYPOINT", "INVALID_ENV", "INVALID_EVENT", "INVALID_EXEC", "INVALID_EXPIRY", "INVALID_GLOB", "INVALID_GRACE", "INVALID_HTTP_RULE", "INVALID_ID", "INVALID_IDLE", "INVALID_IMAGE", "INVALID_IMAGE_NAME", "INVALID_IMAGE_REF", "INVALID_INSTANCE", "INVALID_INSTANCE_ID", "INVALID_JSON", "INVALID_KEY", "INVALID_LABEL", "INVALID_LEASE", "INVALID_MATCH", "INVALID_MEMORY", "INVALID_MODE", "INVALID_MOVE", "INVALID_NAME", "INVALID_NETWORK", "INVALID_OFFSET", "INVALID_PARAMETER", "INVALID_PATH", "INVALID_PID", "INVALID_PIDS_LIMIT", "INVALID_POLICY", "INVALID_POOL", "INVALID_PORT", "INVALID_PREVIEW_DOMAIN", "INVALID_PROBE", "INVALID_PUBLIC_KEY", "INVALID_REGEX", "INVALID_RESTART_POLICY", "INVALID_RUN", "INVALID_RUNTIME_ROOT", "INVALID_SANDBOX", "INVALID_SCREEN_SIZE", "INVALID_SECRET", "INVALID_SIGNAL", "INVALID_SIZE", "INVALID_SNAPSHOT", "INVALID_SNAPSHOT_NAME", "INVALID_STATE", "INVALID_STREAM", "INVALID_SUBNET", "INVALID_TARGET", "INVALID_TEAM", "INVALID_TIME", "INVALID_TIMEOUT", "INVALID_VOLUME", "INVALID_WORKDIR", "IS_A_DIRECTORY", "KEY_NOT_FOUND", "LANGUAGE_NOT_AVAILABLE", "LANGUAGE_STATELESS_ONLY", "LEASE_NOT_FOUND", "LIST_TOO_LARGE", "LIVE_MOUNT_UNSUPPORTED", "LSP_FAILED", "LSP_LIMIT", "LSP_NOT_STARTED", "MEMORY_BELOW_USAGE", "MEMORY_IMAGE_GONE", "MEMORY_IMAGE_RUNSC", "MEMORY_SNAPSHOT_ENV", "MEMORY_SNAPSHOT_LIMITS", "MEMORY_SNAPSHOT_NETWORK", "MEMORY_UNSUPPORTED", "METRICS_UNAVAILABLE", "MISSING_SCOPE", "NAME_MISMATCH", "NAME_TAKEN", "NETWORK_FULL", "NETWORK_UNAVAILABLE", "NFT_UNAVAILABLE", "NOT_A_DIRECTORY", "NOT_A_REGULAR_FILE", "NOT_IN_CURRENT_INSTANCE", "NO_EGRESS", "NO_MAIN_PROCESS", "NO_NETWORK", "NO_PARENT", "NO_SPACE", "OFF_SCREEN", "PARENT_GONE", "PARENT_NOT_FOUND", "PATH_NOT_FOUND", "PAUSE_UNSUPPORTED", "PERMISSION_DENIED", "POOL_EXISTS", "POOL_NOT_FOUND", "PORT_EXISTS", "PORT_NOT_FOUND", "PORT_NOT_LISTENING", "PREVIEW_DOMAIN_REQUIRED", "PREVIEW_NOT_FOUND", "PREVIEW_UNAUTHORIZED", "PREVIEW_UNREACHABLE", "PROCESS_EXECUTION_TIMEOUT", "PROCESS_EXISTS", "PROCESS_EXITED", "PROCESS_LIMIT", "PROCESS_NOT_FOUND", "PTY_EXISTS", "PTY_EXITED", "PTY_NOT_FOUND", "PTY_UNAVAILABLE", "QUOTA_CPU", "QUOTA_DISK", "QUOTA_MEMORY", "QUOTA_RUNNING", "QUOTA_SANDBOXES", "QUOTA_SNAPSHOTS", "RATE_LIMITED", "READ_ONLY_FILESYSTEM", "RECORDING_ACTIVE", "RECORDING_NOT_ACTIVE", "RECORDING_NOT_FOUND", "REGISTRY_UNAVAILABLE", "ROUTE_NOT_FOUND", "RUNTIME_UNAVAILABLE", "RUN_CANCELLED", "SANDBOX_BUSY", "SANDBOX_HAS_FORKS", "SANDBOX_NOT_FOUND", "SANDBOX_NOT_PAUSED", "SANDBOX_NOT_RUNNING", "SANDBOX_NOT_STARTED", "SANDBOX_NOT_STOPPED", "SANDBOX_PAUSED", "SANDBOX_UNAVAILABLE", "SCHEMA_TOO_NEW", "SECRET_NOT_FOUND", "SESSION_BLOCKED", "SESSION_ENDED", "SESSION_EXISTS", "SESSION_NOT_FOUND", "SHUTTING_DOWN", "SNAPSHOTS_UNSUPPORTED", "SNAPSHOT_EXISTS", "SNAPSHOT_GONE", "SNAPSHOT_NOT_FOUND", "SSH_ACCESS_NOT_FOUND", "SSH_DISABLED", "STALE_HANDLE", "STDIN_BLOCKED", "STDIN_CLOSED", "STDIN_WRITE", "STREAM_LINE_TOO_LONG", "SUBNET_CHANGED", "SUBNET_CONFLICT", "SUSPEND_UNSUPPORTED", "TAR_CONFLICT", "TAR_INVALID", "TAR_UNSAFE_PATH", "TAR_UNSUPPORTED_ENTRY", "TEAMS_UNAVAILABLE", "TEAM_EXISTS", "TEAM_NOT_EMPTY", "TEAM_NOT_FOUND", "UNAUTHORIZED", "UNKNOWN_FIELD", "UNKNOWN_KEY", "UNKNOWN_LANGUAGE", "UNKNOWN_SECRET", "UNKNOWN_USER", "UPLOAD_INCOMPLETE", "VOLUME_EXISTS", "VOLUME_IN_USE", "VOLUME_NOT_FOUND", "WAIT_TIMEOUT", "WATCH_FAILED", "WATCH_LIMIT", "WATCH_ROOT_GONE", "WEBHOOK_NOT_FOUND", "WINDOW_NOT_FOUND"]
    message: str
    reason: NotRequired[str]


class Event(TypedDict):
    "Event is one recorded state change of a sandbox. Reason says why: \"create\", \"user\", \"lazy\", \"idle\", \"ttl\", \"auto-archive\", \"auto-delete\", \"main-exit\", \"oom\", \"crash\", \"reconcile\", \"delete\", \u2026"
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: str
    sandboxName: NotRequired[str]
    seq: int
    state: Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]
    team: NotRequired[str]
    time: str


EventLine = Union["EventLineEvent", "EventLineHeartbeat", "EventLineError"]


class EventLineError(TypedDict):
    "One EventLine whose type is \"error\"."
    error: "ErrorBody"
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: NotRequired[str]
    sandboxName: NotRequired[str]
    seq: NotRequired[int]
    state: NotRequired[Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]]
    team: NotRequired[str]
    time: NotRequired[str]
    type: Literal["error"]


class EventLineEvent(TypedDict):
    "One EventLine whose type is \"event\"."
    error: NotRequired["ErrorBody"]
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: NotRequired[str]
    sandboxName: NotRequired[str]
    seq: NotRequired[int]
    state: NotRequired[Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]]
    team: NotRequired[str]
    time: NotRequired[str]
    type: Literal["event"]


class EventLineFields(TypedDict):
    "EventLine is one line of a followed event stream (NDJSON). Type is \"event\" (the Event's fields are inline), \"heartbeat\" or \"error\"."
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


class EventLineHeartbeat(TypedDict):
    "One EventLine whose type is \"heartbeat\"."
    error: NotRequired["ErrorBody"]
    message: NotRequired[str]
    reason: NotRequired[str]
    sandboxId: NotRequired[str]
    sandboxName: NotRequired[str]
    seq: NotRequired[int]
    state: NotRequired[Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"]]
    team: NotRequired[str]
    time: NotRequired[str]
    type: Literal["heartbeat"]


class ExecCommandError(TypedDict):
    error: Dict[str, Any]


ExecEvent = Union["ExecEventStart", "ExecEventStdout", "ExecEventStderr", "ExecEventExit", "ExecEventEnd", "ExecEventHeartbeat", "ExecEventError"]


class ExecEventEnd(TypedDict):
    "One ExecEvent whose type is \"end\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["end"]


class ExecEventError(TypedDict):
    "One ExecEvent whose type is \"error\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: "ErrorBody"
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["error"]


class ExecEventExit(TypedDict):
    "One ExecEvent whose type is \"exit\"."
    data: NotRequired[str]
    durationMs: int
    error: NotRequired["ErrorBody"]
    exitCode: int
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: bool
    type: Literal["exit"]


class ExecEventFields(TypedDict):
    "ExecEvent is one line of a streamed exec (NDJSON, one JSON object per line). Type is \"start\", \"stdout\", \"stderr\", \"exit\", \"heartbeat\" or \"error\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["start", "stdout", "stderr", "exit", "end", "heartbeat", "error"]


class ExecEventHeartbeat(TypedDict):
    "One ExecEvent whose type is \"heartbeat\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["heartbeat"]


class ExecEventStart(TypedDict):
    "One ExecEvent whose type is \"start\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["start"]


class ExecEventStderr(TypedDict):
    "One ExecEvent whose type is \"stderr\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["stderr"]


class ExecEventStdout(TypedDict):
    "One ExecEvent whose type is \"stdout\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["stdout"]


class ExecInSessionError(TypedDict):
    error: Dict[str, Any]


class ExecRequest(TypedDict):
    "ExecRequest runs one command. Exactly one of Cmd and Shell is set; Shell runs under /bin/sh -c."
    cmd: NotRequired[List[str]]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    shell: NotRequired[str]
    stdin: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class ExecResult(TypedDict):
    "ExecResult is the outcome of a finished command."
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
    "ExposePortRequest is the body of POST /v1/sandboxes/{id}/ports."
    port: int
    public: NotRequired[bool]


class FileInfo(TypedDict):
    "FileInfo describes one file inside a sandbox."
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
    "ForkRequest is the body of POST /v1/sandboxes/{id}/fork."
    count: NotRequired[int]
    name: NotRequired[str]


class ForkResult(TypedDict):
    "ForkResult is the answer of a fork."
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


class GetDesktopProgramLogsError(TypedDict):
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


class GetRecordingError(TypedDict):
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
    "GitAddRemoteRequest is the body of POST \u2026/git/remotes."
    fetch: NotRequired[bool]
    name: str
    overwrite: NotRequired[bool]
    path: str
    url: str


class GitAddRequest(TypedDict):
    "GitAddRequest is the body of POST /v1/sandboxes/{id}/git/add."
    files: List[str]
    path: str


class GitBranchRequest(TypedDict):
    "GitBranchRequest is the body of POST \u2026/git/branches/delete."
    name: str
    path: str


class GitBranches(TypedDict):
    "GitBranches lists a repository's branches."
    current: str
    local: List[str]
    remote: List[str]


class GitBranchesError(TypedDict):
    error: Dict[str, Any]


class GitCheckoutError(TypedDict):
    error: Dict[str, Any]


class GitCheckoutRequest(TypedDict):
    "GitCheckoutRequest is the body of POST /v1/sandboxes/{id}/git/checkout."
    branch: str
    create: NotRequired[bool]
    force: NotRequired[bool]
    path: str


class GitCloneError(TypedDict):
    error: Dict[str, Any]


class GitCloneRequest(TypedDict):
    "GitCloneRequest is the body of POST /v1/sandboxes/{id}/git/clone."
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
    "GitCommit is one commit: the answer of commit, an entry of log."
    authorEmail: str
    authorName: str
    hash: str
    message: str
    time: str


class GitCommitError(TypedDict):
    error: Dict[str, Any]


class GitCommitRequest(TypedDict):
    "GitCommitRequest is the body of POST /v1/sandboxes/{id}/git/commit."
    all: NotRequired[bool]
    allowEmpty: NotRequired[bool]
    authorEmail: NotRequired[str]
    authorName: NotRequired[str]
    message: str
    path: str


class GitConfigError(TypedDict):
    error: Dict[str, Any]


class GitConfigRequest(TypedDict):
    "GitConfigRequest reads or sets one git configuration option (the agent's git config operation)."
    key: str
    path: NotRequired[str]
    scope: NotRequired[str]
    value: NotRequired[str]


class GitConfigValue(TypedDict):
    "GitConfigValue is an option's value."
    value: NotRequired[str]


class GitCredentialsError(TypedDict):
    error: Dict[str, Any]


class GitCredentialsRequest(TypedDict):
    "GitCredentialsRequest stores credentials for one git host in the sandbox's git credential store (~/.git-credentials, credential.helper store in the global git config): a later clone, push or pull of that host without credentials uses them, and so does a git program in the sandbox."
    host: str
    password: str
    protocol: str
    username: str


class GitDeleteBranchError(TypedDict):
    error: Dict[str, Any]


class GitFileStatus(TypedDict):
    "GitFileStatus is one file that differs from HEAD. Staging and Worktree are each one of unmodified, untracked, modified, added, deleted, renamed, copied, unmerged."
    path: str
    staging: str
    worktree: str


class GitInitError(TypedDict):
    error: Dict[str, Any]


class GitInitRequest(TypedDict):
    "GitInitRequest is the body of POST \u2026/git/init."
    bare: NotRequired[bool]
    initialBranch: NotRequired[str]
    path: str


class GitLogError(TypedDict):
    error: Dict[str, Any]


class GitLogRequest(TypedDict):
    "GitLogRequest is the body of POST /v1/sandboxes/{id}/git/log."
    limit: NotRequired[int]
    path: str


class GitPullError(TypedDict):
    error: Dict[str, Any]


class GitPushError(TypedDict):
    error: Dict[str, Any]


class GitRemote(TypedDict):
    "GitRemote is one remote of a repository (its first URL)."
    name: str
    url: str


class GitRemotesError(TypedDict):
    error: Dict[str, Any]


class GitRepoRequest(TypedDict):
    "GitRepoRequest names a repository: the body of status and branches. Every Path of a git request defaults to the working directory."
    path: NotRequired[str]


class GitResetError(TypedDict):
    error: Dict[str, Any]


class GitResetRequest(TypedDict):
    "GitResetRequest is the body of POST \u2026/git/reset: move HEAD (and the current branch) to Target and reset the index (mixed), also the worktree (hard), or neither (soft); with Files only those paths of the index."
    files: NotRequired[List[str]]
    mode: NotRequired[str]
    path: str
    target: NotRequired[str]


class GitRestoreError(TypedDict):
    error: Dict[str, Any]


class GitRestoreRequest(TypedDict):
    "GitRestoreRequest is the body of POST \u2026/git/restore: Files of the worktree from the index (Worktree, the default) and/or of the index from HEAD (Staged)."
    files: List[str]
    path: str
    staged: NotRequired[bool]
    worktree: NotRequired[bool]


class GitStatus(TypedDict):
    "GitStatus is a repository's state: the answer of clone, status, checkout, add and pull."
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
    "GitSyncRequest is the body of push and pull."
    branch: NotRequired[str]
    force: NotRequired[bool]
    path: str
    remote: NotRequired[str]
    setUpstream: NotRequired[bool]
    timeoutSeconds: NotRequired[int]
    token: NotRequired[str]
    username: NotRequired[str]


class GitSyncResult(TypedDict):
    "GitSyncResult is the answer of push and pull."
    branch: str
    head: str
    upToDate: bool


class GlobFilesError(TypedDict):
    error: Dict[str, Any]


class GlobRequest(TypedDict):
    "GlobRequest is the body of POST \u2026/files/glob: the files and directories under Path whose name matches Pattern (path.Match syntax, as find -name)."
    max: NotRequired[int]
    path: str
    pattern: str


class GlobResult(TypedDict):
    "GlobResult is the answer of \u2026/files/glob."
    files: List[str]
    truncated: bool


class GrepFilesError(TypedDict):
    error: Dict[str, Any]


class GrepMatch(TypedDict):
    "GrepMatch is one line that matched."
    content: str
    file: str
    line: int


class GrepRequest(TypedDict):
    "GrepRequest is the body of POST \u2026/files/grep: lines of the text files under Path that contain Pattern (a plain string, or with Regex a regular expression)."
    max: NotRequired[int]
    path: str
    pattern: str
    regex: NotRequired[bool]


class GrepResult(TypedDict):
    "GrepResult is the answer of \u2026/files/grep."
    matches: List["GrepMatch"]
    truncated: bool


class HTTPEgress(TypedDict):
    "HTTPEgress is the http section of an egress policy. With it the daemon sees a bridge sandbox's outbound HTTP (TCP port 80) and HTTPS (TCP 443): both are redirected to a proxy in the daemon, transparently. HTTPS is decrypted only for hosts a rule names (with a certificate from the daemon's CA, which every sandbox trusts); other HTTPS passes untouched. Rules are tried in order; the first that matches decides. A request no rule matches is passed on (logged with rule -1)."
    rules: List["HTTPRule"]


class HTTPForwardTo(TypedDict):
    "HTTPForwardTo sends each matching request's method, URL and headers (and its body up to 1 MiB when Body) as an HTTPHandlerRequest to URL, POSTed and signed like the daemon's webhooks (X-Sbx-Timestamp, X-Sbx-Signature) but with the sandbox's team's key, derived from --webhook-secret (webhook.TeamKey; the team is in X-Sbx-Team). URL must be above the operator's network floor, and a redirect it answers is not followed. The handler answers an HTTPHandlerAnswer within TimeoutSeconds (default 5, at most 60); if it does not, or answers nonsense, the request is passed on when FailOpen, else answered 502."
    body: NotRequired[bool]
    failOpen: NotRequired[bool]
    timeoutSeconds: NotRequired[int]
    url: str


class HTTPInject(TypedDict):
    "HTTPInject sets header Header to Prefix + the value of the team's secret Secret (see SecretInfo), replacing what the sandbox sent. The value is added on the way out; it never enters the sandbox."
    header: str
    prefix: NotRequired[str]
    secret: str


class HTTPRewrite(TypedDict):
    "HTTPRewrite changes where a request goes: any of scheme (\"http\" or \"https\"), host (a name or name:port), and the matched path prefix (replaced by PathPrefix)."
    host: NotRequired[str]
    pathPrefix: NotRequired[str]
    scheme: NotRequired[str]


class HTTPRule(TypedDict):
    "HTTPRule matches requests by host (\"api.example.com\", \"*.example.com\" for every name below it, or \"*\" for every host), optionally method and path prefix, and applies Action. Inject, Rewrite and Forward go with the action of the same name."
    action: str
    forward: NotRequired["HTTPForwardTo"]
    host: str
    inject: NotRequired[List["HTTPInject"]]
    method: NotRequired[str]
    pathPrefix: NotRequired[str]
    rewrite: NotRequired["HTTPRewrite"]


class Image(TypedDict):
    "Image is a set of read-only layers sandboxes start from."
    config: NotRequired["ImageConfig"]
    createdAt: str
    id: str
    layers: int
    name: str
    sizeBytes: int
    source: str
    team: NotRequired[str]


class ImageConfig(TypedDict):
    "ImageConfig is an image's configuration: env and working directory are a new sandbox's defaults; user, entrypoint, cmd and labels are recorded."
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


class LSPCompletionItem(TypedDict):
    "LSPCompletionItem is one completion."
    detail: NotRequired[str]
    documentation: NotRequired[str]
    filterText: NotRequired[str]
    insertText: NotRequired[str]
    kind: NotRequired[int]
    label: str
    sortText: NotRequired[str]


class LSPCompletionList(TypedDict):
    "LSPCompletionList is the answer of \u2026/lsp/completions."
    incomplete: bool
    items: List["LSPCompletionItem"]


class LSPCompletionRequest(TypedDict):
    "LSPCompletionRequest is the body of \u2026/lsp/completions."
    language: str
    path: str
    position: "LSPPosition"
    project: str
    triggerCharacter: NotRequired[str]


class LSPDocumentRequest(TypedDict):
    "LSPDocumentRequest is the body of did-open, did-close and document-symbols: a file of the project."
    language: str
    path: str
    project: str


class LSPPosition(TypedDict):
    "LSPPosition is a place in a file."
    character: int
    line: int


class LSPRange(TypedDict):
    "LSPRange is a span of a file."
    end: "LSPPosition"
    start: "LSPPosition"


class LSPServer(TypedDict):
    "LSPServer describes a running language server."
    language: str
    openDocuments: int
    pid: int
    program: str
    project: str


class LSPServerRequest(TypedDict):
    "LSPServerRequest names a language server: one runs per language and project directory."
    language: str
    project: str


class LSPSymbol(TypedDict):
    "LSPSymbol is a symbol (class, function, variable\u2026) a server found."
    container: NotRequired[str]
    kind: int
    name: str
    range: "LSPRange"
    uri: str


class LSPWorkspaceSymbolsRequest(TypedDict):
    "LSPWorkspaceSymbolsRequest is the body of \u2026/lsp/workspace-symbols."
    language: str
    project: str
    query: str


class LanguageServerCompletionsError(TypedDict):
    error: Dict[str, Any]


class LanguageServerDocumentSymbolsError(TypedDict):
    error: Dict[str, Any]


class LanguageServerWorkspaceSymbolsError(TypedDict):
    error: Dict[str, Any]


class LaunchApplicationError(TypedDict):
    error: Dict[str, Any]


class LaunchRequest(TypedDict):
    "LaunchRequest starts an application on the desktop (POST \u2026/desktop/launch) as a background process with DISPLAY set; it is listed with the sandbox's processes. Exactly one of Cmd and Shell."
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


class ListRecordingsError(TypedDict):
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


LogLine = Union["LogLineData", "LogLineHeartbeat", "LogLineEnd", "LogLineError"]


class LogLineData(TypedDict):
    "One LogLine whose type is \"data\"."
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    offset: NotRequired[int]
    time: NotRequired[str]
    type: Literal["data"]


class LogLineEnd(TypedDict):
    "One LogLine whose type is \"end\"."
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    offset: NotRequired[int]
    time: NotRequired[str]
    type: Literal["end"]


class LogLineError(TypedDict):
    "One LogLine whose type is \"error\"."
    data: NotRequired[str]
    error: "ErrorBody"
    offset: NotRequired[int]
    time: NotRequired[str]
    type: Literal["error"]


class LogLineFields(TypedDict):
    "LogLine is one line of GET /v1/sandboxes/{id}/logs (NDJSON): the output of the sandbox's main process, stdout and stderr together. Type is \"data\" (Data holds bytes that start at Offset in the log), \"heartbeat\", \"end\" (nothing more will come) or \"error\"."
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    offset: NotRequired[int]
    time: NotRequired[str]
    type: Literal["data", "heartbeat", "end", "error"]


class LogLineHeartbeat(TypedDict):
    "One LogLine whose type is \"heartbeat\"."
    data: NotRequired[str]
    error: NotRequired["ErrorBody"]
    offset: NotRequired[int]
    time: NotRequired[str]
    type: Literal["heartbeat"]


class LogMatch(TypedDict):
    "LogMatch is the line that satisfied a WaitForLog."
    line: str
    seq: int
    stream: Literal["stdout", "stderr"]


class LookupUserError(TypedDict):
    error: Dict[str, Any]


class MakeDirectoryError(TypedDict):
    error: Dict[str, Any]


class MakeDirectoryOwnedError(TypedDict):
    error: Dict[str, Any]


class MkdirRequest(TypedDict):
    "MkdirRequest is the body of POST \u2026/files/mkdir."
    mode: NotRequired[str]
    parents: NotRequired[bool]
    path: str


class MountBucketError(TypedDict):
    error: Dict[str, Any]


class MouseClickRequest(TypedDict):
    "MouseClickRequest clicks a button (POST \u2026/desktop/mouse/click), at X,Y when both are set, else where the pointer is."
    button: NotRequired[str]
    double: NotRequired[bool]
    x: NotRequired[int]
    y: NotRequired[int]


MouseDragRequest = TypedDict("MouseDragRequest", {"button": NotRequired[str], "from": "DesktopPoint", "to": "DesktopPoint"})


class MouseMoveRequest(TypedDict):
    "MouseMoveRequest moves the pointer (POST \u2026/desktop/mouse/move)."
    x: int
    y: int


class MouseScrollRequest(TypedDict):
    "MouseScrollRequest turns the wheel (POST \u2026/desktop/mouse/scroll), at X,Y when both are set."
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
    "NetworkInfo is a sandbox's network: GET /v1/sandboxes/{id}/network."
    address: NotRequired[str]
    egress: NotRequired["EgressPolicy"]
    gateway: NotRequired[str]
    mode: Literal["bridge", "none"]


class OpenLanguageServerDocumentError(TypedDict):
    error: Dict[str, Any]


class PTY(TypedDict):
    "PTY is a terminal in a sandbox and the program that runs on it (the session leader). It keeps running while no client is attached."
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


PTYControl = Union["PTYControlResize", "PTYControlExit", "PTYControlError"]


class PTYControlError(TypedDict):
    "One PTYControl whose type is \"error\"."
    cols: NotRequired[int]
    error: "ErrorBody"
    exitCode: NotRequired[int]
    rows: NotRequired[int]
    signal: NotRequired[str]
    type: Literal["error"]


class PTYControlExit(TypedDict):
    "One PTYControl whose type is \"exit\"."
    cols: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    rows: NotRequired[int]
    signal: NotRequired[str]
    type: Literal["exit"]


class PTYControlFields(TypedDict):
    "PTYControl is a text frame on a PTY WebSocket. Binary frames carry the terminal's bytes both ways; text frames carry these: \"resize\" from the client, \"exit\" from the server (then it closes the socket), and \"error\" from the server when the instance went away before the program exited (INSTANCE_LOST with the stop reason; then it closes the socket)."
    cols: NotRequired[int]
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    rows: NotRequired[int]
    signal: NotRequired[str]
    type: Literal["resize", "exit", "error"]


class PTYControlResize(TypedDict):
    "One PTYControl whose type is \"resize\"."
    cols: int
    error: NotRequired["ErrorBody"]
    exitCode: NotRequired[int]
    rows: int
    signal: NotRequired[str]
    type: Literal["resize"]


class PauseSandboxError(TypedDict):
    error: Dict[str, Any]


class PermissionsRequest(TypedDict):
    "PermissionsRequest is the body of POST \u2026/files/permissions; empty fields are left as they are."
    group: NotRequired[str]
    mode: NotRequired[str]
    owner: NotRequired[str]
    path: str


class Pool(TypedDict):
    "Pool is a warm pool and how full it is."
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
    "Port is an exposed port of a sandbox and how to reach it."
    createdAt: str
    hostUrl: NotRequired[str]
    pathUrl: str
    port: int
    public: bool
    token: str
    url: str


class PortReady(TypedDict):
    "PortReady is the answer of a successful WaitForPort."
    elapsedMs: int
    port: int
    status: NotRequired[int]


class PressKeyError(TypedDict):
    error: Dict[str, Any]


class PressKeyRequest(TypedDict):
    "PressKeyRequest presses a key or a chord (POST \u2026/desktop/keyboard/press): \"Return\", \"a\", \"ctrl+c\", \"alt+tab\", \"ctrl+shift+t\". Modifiers: ctrl, shift, alt, super (meta, win, cmd). Keys: a single character or an X keysym name (Return/Enter, Escape/Esc, Tab, BackSpace, Delete, Home, End, Page_Up, Page_Down, Up, Down, Left, Right, space, F1\u2026F24, \u2026). An unknown name is 400 UNKNOWN_KEY."
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
    "Process is a background process started in a sandbox. It runs in its own process group; signals reach the whole group."
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
    "PullRequest is the body of POST /v1/images/pull."
    name: NotRequired[str]
    ref: str


class Quotas(TypedDict):
    "Quotas limit what a team may hold at once; 0 means no limit."
    cpu: NotRequired[float]
    diskMiB: NotRequired[int]
    maxRunning: NotRequired[int]
    maxSandboxes: NotRequired[int]
    maxSnapshots: NotRequired[int]
    memoryMiB: NotRequired[int]


class ReadFileError(TypedDict):
    error: Dict[str, Any]


class Recording(TypedDict):
    "Recording is one screen recording."
    durationSeconds: NotRequired[float]
    endedAt: NotRequired[str]
    fileName: str
    id: str
    label: NotRequired[str]
    path: str
    sizeBytes: int
    startedAt: str
    status: str


class RecordingStartRequest(TypedDict):
    "RecordingStartRequest is the body of POST \u2026/desktop/recordings."
    label: NotRequired[str]


Recovery = TypedDict("Recovery", {"at": str, "from": str, "message": str, "savedAt": NotRequired[str]})


class ReplaceInFilesError(TypedDict):
    error: Dict[str, Any]


class ReplaceRequest(TypedDict):
    "ReplaceRequest is the body of POST \u2026/files/replace: every Old in each file becomes New."
    files: List[str]
    new: str
    old: str


class ReplaceResult(TypedDict):
    "ReplaceResult is one file's outcome of \u2026/files/replace."
    error: NotRequired[str]
    file: str
    replaced: int


class ResizePTYError(TypedDict):
    error: Dict[str, Any]


class ResizeRequest(TypedDict):
    "ResizeRequest sets a terminal's size (POST \u2026/ptys/{pty}/resize)."
    cols: int
    rows: int


class RestartContextError(TypedDict):
    error: Dict[str, Any]


class RestartDesktopProgramError(TypedDict):
    error: Dict[str, Any]


class RestoreBackupError(TypedDict):
    error: Dict[str, Any]


class RestoreBackupRequest(TypedDict):
    "RestoreBackupRequest is the body of POST /v1/backups/{id}/restore."
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
    "RunCodeRequest is the body of POST \u2026/contexts/{cid}/run."
    code: str
    env: NotRequired[Dict[str, str]]
    timeoutSeconds: NotRequired[float]


RunEvent = Union["RunEventStdout", "RunEventStderr", "RunEventResult", "RunEventError", "RunEventHeartbeat", "RunEventEnd"]


class RunEventEnd(TypedDict):
    "One RunEvent whose type is \"end\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["end"]


class RunEventError(TypedDict):
    "One RunEvent whose type is \"error\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: "CodeError"
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["error"]


class RunEventFields(TypedDict):
    "RunEvent is one line of a streamed run (?stream=true, NDJSON). Type is \"stdout\" or \"stderr\" (Data), \"result\" (Result), \"error\", \"heartbeat\" or \"end\" (TimedOut, DurationMs; always the last event of a run that finished). An \"error\" event with Name is the code's exception and is followed by \"end\"; one with Code means the stream broke and nothing follows."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["stdout", "stderr", "result", "error", "heartbeat", "end"]


class RunEventHeartbeat(TypedDict):
    "One RunEvent whose type is \"heartbeat\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["heartbeat"]


class RunEventResult(TypedDict):
    "One RunEvent whose type is \"result\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["result"]


class RunEventStderr(TypedDict):
    "One RunEvent whose type is \"stderr\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["stderr"]


class RunEventStdout(TypedDict):
    "One RunEvent whose type is \"stdout\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: NotRequired["CodeError"]
    result: NotRequired["CodeResult"]
    seq: NotRequired[int]
    timedOut: NotRequired[bool]
    type: Literal["stdout"]


class RunRequest(TypedDict):
    "RunRequest is the body of POST /v1/sandboxes/{id}/run: one stateless run in a fresh interpreter."
    code: str
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    language: str
    timeoutSeconds: NotRequired[float]


class RunResult(TypedDict):
    "RunResult is the outcome of a run."
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
    "SSHAccess is a way into a sandbox over the daemon's SSH gateway. Token and Command are only in the answer that creates a token; the daemon keeps just the token's hash."
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


Sandbox = TypedDict("Sandbox", {"autoArchiveSeconds": int, "autoDeleteSeconds": int, "autoPauseSeconds": int, "autoStopSeconds": int, "buckets": NotRequired[List["BucketMount"]], "class": Literal["container", "gvisor"], "cpu": float, "createdAt": str, "diskMiB": int, "egress": NotRequired["EgressPolicy"], "entrypoint": NotRequired[List[str]], "env": NotRequired[Dict[str, str]], "ephemeral": bool, "error": NotRequired[str], "expiresAction": NotRequired[Literal["stop", "pause", "archive", "delete"]], "expiresAt": NotRequired[str], "id": str, "image": str, "keepAlive": bool, "labels": Dict[str, str], "lastActivityAt": NotRequired[str], "memoryMiB": int, "name": NotRequired[str], "network": NotRequired[Literal["bridge", "none"]], "parent": NotRequired[str], "pidsLimit": int, "reason": NotRequired[str], "recovery": NotRequired["Recovery"], "restartPolicy": NotRequired[Literal["never", "on-failure", "always"]], "snapshot": NotRequired[str], "startedAt": NotRequired[str], "state": Literal["creating", "starting", "started", "stopping", "stopped", "deleting", "deleted", "error", "pausing", "paused", "resuming", "archiving", "archived", "restoring"], "stoppedAt": NotRequired[str], "team": NotRequired[str], "ttlFrom": NotRequired[str], "ttlSeconds": int, "volumes": NotRequired[List["VolumeMount"]], "workdir": str})


class SandboxStats(TypedDict):
    "SandboxStats is what a sandbox uses now (GET /v1/sandboxes/{id}/stats). A sandbox without a running instance reads as zeros, with its state. Sizes are bytes; a limit of 0 means none."
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
    "SecretHosts says where a secret may be sent: 1 to 32 hosts such as \"api.example.com\" or \"*.example.com\", optionally with \":port\" (without, 443 for HTTPS and 80 for HTTP), never \"*\". HTTPS only unless AllowHTTP. Inject rules for other hosts are refused, and the proxy checks every request's scheme, host and port before it adds the value."
    allowHttp: NotRequired[bool]
    hosts: List[str]


class SecretInfo(TypedDict):
    "SecretInfo is what the API tells about a secret: never its value. Hosts is empty for a secret made before secrets had hosts: it is injected nowhere until they are set (PUT /v1/secrets/{name}/hosts)."
    allowHttp: NotRequired[bool]
    createdAt: str
    hosts: List[str]
    name: str
    size: int
    team: str


class SendSessionCommandInputError(TypedDict):
    error: Dict[str, Any]


class Session(TypedDict):
    "Session is a persistent shell: the working directory, exported variables, functions and aliases of one command are there for the next."
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
    "SessionCommand is one recorded command."
    command: str
    exitCode: NotRequired[int]
    id: str
    logs: NotRequired["SessionLogs"]


class SessionCommandLogsError(TypedDict):
    error: Dict[str, Any]


SessionEvent = Union["SessionEventStart", "SessionEventStdout", "SessionEventStderr", "SessionEventExit", "SessionEventEnd", "SessionEventHeartbeat", "SessionEventError"]


class SessionEventEnd(TypedDict):
    "One SessionEvent whose type is \"end\"."
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
    type: Literal["end"]


class SessionEventError(TypedDict):
    "One SessionEvent whose type is \"error\"."
    data: NotRequired[str]
    durationMs: NotRequired[int]
    error: "ErrorBody"
    exitCode: NotRequired[int]
    pid: NotRequired[int]
    seq: NotRequired[int]
    sessionEnded: NotRequired[bool]
    shellRestarted: NotRequired[bool]
    signal: NotRequired[str]
    timedOut: NotRequired[bool]
    type: Literal["error"]


class SessionEventExit(TypedDict):
    "One SessionEvent whose type is \"exit\"."
    data: NotRequired[str]
    durationMs: int
    error: NotRequired["ErrorBody"]
    exitCode: int
    pid: NotRequired[int]
    seq: NotRequired[int]
    sessionEnded: NotRequired[bool]
    shellRestarted: NotRequired[bool]
    signal: NotRequired[str]
    timedOut: bool
    type: Literal["exit"]


class SessionEventFields(TypedDict):
    "SessionEvent is one line of a streamed session command: an ExecEvent whose \"exit\" also says whether the shell ended and whether it was restarted."
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


class SessionEventHeartbeat(TypedDict):
    "One SessionEvent whose type is \"heartbeat\"."
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
    type: Literal["heartbeat"]


class SessionEventStart(TypedDict):
    "One SessionEvent whose type is \"start\"."
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
    type: Literal["start"]


class SessionEventStderr(TypedDict):
    "One SessionEvent whose type is \"stderr\"."
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
    type: Literal["stderr"]


class SessionEventStdout(TypedDict):
    "One SessionEvent whose type is \"stdout\"."
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
    type: Literal["stdout"]


class SessionExecRequest(TypedDict):
    "SessionExecRequest runs one command in a session's shell. Commands in a session run one at a time; a second call waits for the first."
    command: str
    timeoutSeconds: NotRequired[float]


class SessionExecResult(TypedDict):
    "SessionExecResult is the outcome of a command in a session. On a timeout the whole command line stops (its processes are killed, the rest of the list is skipped), ExitCode is 137 (128+SIGKILL) and the shell is kept; only when the shell itself does not come back (it ignores the interrupt) is it killed, and SessionEnded is set. A session whose shell has ended starts a fresh one for its next command, under the same id, with the session's original shell, working directory and environment (what earlier commands changed is gone, and what the old shell left running in the background is killed); that command's result has ShellRestarted set."
    durationMs: int
    exitCode: int
    sessionEnded: bool
    shellRestarted: bool
    stderr: str
    stdout: str
    timedOut: bool
    truncated: bool


class SessionInput(TypedDict):
    "SessionInput is the body of POST \u2026/commands/{command}/input."
    data: str


class SessionLogEvent(TypedDict):
    "SessionLogEvent is one NDJSON line of \u2026/commands/{command}/logs with follow=true: \"stdout\"/\"stderr\" with Data, then one \"exit\" with ExitCode."
    data: NotRequired[str]
    exitCode: int
    type: str


class SessionLogs(TypedDict):
    "SessionLogs is a command's output: both streams in order, and each."
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
    "SignPortRequest is the body of POST /v1/sandboxes/{id}/signed-urls."
    expiresInSeconds: NotRequired[int]
    port: int


class SignPreviewURLError(TypedDict):
    error: Dict[str, Any]


class SignalProcessError(TypedDict):
    error: Dict[str, Any]


class SignalRequest(TypedDict):
    "SignalRequest is the body of POST \u2026/processes/{process}/signal."
    signal: NotRequired[str]


class SignedURL(TypedDict):
    "SignedURL is a preview URL that works without a key or token until it expires."
    expiresAt: str
    url: str


Snapshot = TypedDict("Snapshot", {"class": Literal["container", "gvisor"], "createdAt": str, "expiresAt": NotRequired[str], "expiresInSeconds": int, "image": str, "memory": bool, "name": str, "sandbox": str, "sizeBytes": int})


class StartDesktopError(TypedDict):
    error: Dict[str, Any]


class StartLanguageServerError(TypedDict):
    error: Dict[str, Any]


class StartProcessError(TypedDict):
    error: Dict[str, Any]


class StartProcessRequest(TypedDict):
    "StartProcessRequest starts a background process (POST \u2026/processes). Exactly one of Cmd and Shell is set; Shell runs under /bin/sh -c."
    cmd: NotRequired[List[str]]
    cwd: NotRequired[str]
    env: NotRequired[Dict[str, str]]
    id: NotRequired[str]
    shell: NotRequired[str]
    timeoutSeconds: NotRequired[float]
    user: NotRequired[str]


class StartRecordingError(TypedDict):
    error: Dict[str, Any]


class StartSandboxError(TypedDict):
    error: Dict[str, Any]


class StatFileError(TypedDict):
    error: Dict[str, Any]


class StopDesktopError(TypedDict):
    error: Dict[str, Any]


class StopLanguageServerError(TypedDict):
    error: Dict[str, Any]


class StopRecordingError(TypedDict):
    error: Dict[str, Any]


class StopSandboxError(TypedDict):
    error: Dict[str, Any]


class TakeScreenshotError(TypedDict):
    error: Dict[str, Any]


class Team(TypedDict):
    "Team owns sandboxes, snapshots, events and API keys. Daytona calls it an organization, E2B a team."
    createdAt: str
    id: str
    quotas: "Quotas"


class TeamUsage(TypedDict):
    "TeamUsage is what a team holds now, against its quotas."
    cpu: float
    diskMiB: int
    memoryMiB: int
    quotas: "Quotas"
    running: int
    sandboxes: int
    snapshots: int
    team: str


class TeamWebhook(TypedDict):
    "TeamWebhook is where a team's events are POSTed, signed as the operator's webhooks are (X-Sbx-Signature) with Secret. Answers never show the secret."
    secret: NotRequired[str]
    url: str


class TypeTextError(TypedDict):
    error: Dict[str, Any]


class TypeTextRequest(TypedDict):
    "TypeTextRequest types text as key presses (POST \u2026/desktop/keyboard/type). Any Unicode text works; \"\\n\" presses Return."
    delayMs: NotRequired[int]
    text: str


class UnexposePortError(TypedDict):
    error: Dict[str, Any]


class UnmountBucketError(TypedDict):
    error: Dict[str, Any]


class UpdatePoolError(TypedDict):
    error: Dict[str, Any]


class UpdatePoolRequest(TypedDict):
    "UpdatePoolRequest resizes a pool; nil fields are left as they are."
    max: NotRequired[int]
    min: NotRequired[int]


class UpdateSandboxError(TypedDict):
    error: Dict[str, Any]


class UpdateSandboxRequest(TypedDict):
    "UpdateSandboxRequest is the body of PATCH /v1/sandboxes/{id}. Fields left nil keep their value. Setting ttlSeconds restarts the TTL from now."
    autoArchiveSeconds: NotRequired[int]
    autoDeleteSeconds: NotRequired[int]
    autoPauseSeconds: NotRequired[int]
    autoStopSeconds: NotRequired[int]
    cpu: NotRequired[float]
    env: NotRequired[Dict[str, Optional[str]]]
    ephemeral: NotRequired[bool]
    keepAlive: NotRequired[bool]
    labels: NotRequired[Dict[str, str]]
    memoryMiB: NotRequired[int]
    pidsLimit: NotRequired[int]
    ttlSeconds: NotRequired[int]


class UploadTarError(TypedDict):
    error: Dict[str, Any]


class User(TypedDict):
    "User is an account of the sandbox's /etc/passwd (GET \u2026/user)."
    gid: int
    home: str
    name: str
    uid: int


class Volume(TypedDict):
    "Volume is a named filesystem of a fixed size that sandboxes mount at create (CreateSandboxRequest.Volumes); several at once, and it outlives them."
    createdAt: str
    name: str
    sizeMiB: int
    team: NotRequired[str]
    usedBy: List[str]
    usedMiB: int


class VolumeMount(TypedDict):
    "VolumeMount mounts volume Name at Path (absolute) inside a sandbox."
    name: str
    path: str
    readOnly: NotRequired[bool]


class WaitForLogRequest(TypedDict):
    "WaitForLogRequest waits until a line of the process's output matches. Exactly one of Substring and Regex is set. Lines already in the retained output count, so a line printed before the call is found too."
    regex: NotRequired[str]
    stream: NotRequired[Literal["stdout", "stderr"]]
    substring: NotRequired[str]
    timeoutSeconds: NotRequired[float]


class WaitForPortRequest(TypedDict):
    "WaitForPortRequest waits until something accepts connections on a port inside the sandbox (127.0.0.1), or, with Protocol \"http\", until a GET answers with the expected status."
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


WatchEvent = Union["WatchEventReady", "WatchEventCreate", "WatchEventWrite", "WatchEventRemove", "WatchEventRename", "WatchEventOverflow", "WatchEventHeartbeat", "WatchEventError"]


class WatchEventCreate(TypedDict):
    "One WatchEvent whose type is \"create\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["create"]


class WatchEventError(TypedDict):
    "One WatchEvent whose type is \"error\"."
    error: "ErrorBody"
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["error"]


class WatchEventFields(TypedDict):
    "WatchEvent is one line of a watch stream. Type is \"ready\" (the watch is set up), \"create\", \"write\", \"remove\", \"rename\" (Path is the new name, OldPath the old), \"overflow\" (the kernel dropped events), \"heartbeat\" or \"error\" (the watch ended)."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["ready", "create", "write", "remove", "rename", "overflow", "heartbeat", "error"]


class WatchEventHeartbeat(TypedDict):
    "One WatchEvent whose type is \"heartbeat\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["heartbeat"]


class WatchEventOverflow(TypedDict):
    "One WatchEvent whose type is \"overflow\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["overflow"]


class WatchEventReady(TypedDict):
    "One WatchEvent whose type is \"ready\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["ready"]


class WatchEventRemove(TypedDict):
    "One WatchEvent whose type is \"remove\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["remove"]


class WatchEventRename(TypedDict):
    "One WatchEvent whose type is \"rename\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["rename"]


class WatchEventWrite(TypedDict):
    "One WatchEvent whose type is \"write\"."
    error: NotRequired["ErrorBody"]
    isDir: NotRequired[bool]
    oldPath: NotRequired[str]
    path: NotRequired[str]
    time: NotRequired[str]
    type: Literal["write"]


class WatchFilesError(TypedDict):
    error: Dict[str, Any]


class WriteFileError(TypedDict):
    error: Dict[str, Any]


class WriteFileOwnedError(TypedDict):
    error: Dict[str, Any]


class WritePTYInputError(TypedDict):
    error: Dict[str, Any]


class WriteProcessStdinError(TypedDict):
    error: Dict[str, Any]
