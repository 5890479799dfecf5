"""Configuration of the LLM baselines: :class:`LLMConfig`, TOML presets and API keys.

**Keys** come from ``OPENAI_API_KEY``, from the environment variable a preset names
(``api_key_env``) or from a key file (``api_key_file``), never from the models file itself.
``repr()`` of configs and clients masks the key, :meth:`LLMConfig.redacted` leaves it out, and
error text that echoes it is masked.

Example models file (``--models-file models.toml --preset qwen-local``)::

    default = "qwen-local"

    [presets.qwen-local]
    model = "Qwen/Qwen3-32B"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "VLLM_API_KEY"          # or api_key_file = "~/.config/vllm.key"; never the key
    tool_mode = "native"
    timeout_s = 300                       # per request, wall clock
    episode_timeout_s = 1800
    extra_body = { chat_template_kwargs = { enable_thinking = false } }

    [presets.qwen-local.roles]            # per-role models for Plan-and-Execute
    planner = "Qwen/Qwen3-235B-A22B"
    worker = "Qwen/Qwen3-32B"
    reporter = "Qwen/Qwen3-32B"
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from mobility_env.errors import ConfigError

LANGUAGES = ("zh", "en")
TOOL_MODES = ("native", "json")
TOOL_CHOICES = ("auto", "required", "none")
#: How a server takes a JSON schema as structured output: ``json_schema`` (OpenAI's ``response_format``, also
#: vLLM, SGLang, llama.cpp's ``llama-server``, Ollama), ``json_object_schema`` (llama-cpp-python's
#: ``{"type": "json_object", "schema": ...}``), ``none`` (never asked for).
STRUCTURED_OUTPUTS = ("none", "json_schema", "json_object_schema")
ROLES = ("react", "planner", "worker", "reporter")
_BODY_SLACK_BYTES = 64 * 1024


# --------------------------------------------------------------------------- configuration
@dataclass
class LLMConfig:
    """Everything the LLM baselines need to reach a model; paper defaults.

    ``model`` may be None: the client then asks the server's ``GET /models`` and uses its
    only model (vLLM and SGLang serve one). ``role_models`` overrides the model per role
    (``react``, ``planner``, ``worker``, ``reporter``). ``extra_body`` is merged into every
    request (server-specific options, e.g. vLLM's ``chat_template_kwargs``). ``max_steps``
    bounds the model turns of an episode; the env's own ``max_steps`` bounds its actions.

    Limits and why these defaults (local servers are slow; see the module docstring):

    * ``timeout_s = 300``: wall-clock deadline of one request. A non-streamed reply arrives
      only when generation ends, and a full ``max_tokens = 8192`` reply at ~30 tokens/s (a
      30B-class model on one GPU serving a batch) takes ~270 s: a shorter deadline would
      cut, then retry, replies that were on their way;
    * ``connect_timeout_s = 10``: a live server, even a busy local one, accepts a connection
      in milliseconds; waiting longer only delays "unreachable";
    * ``episode_timeout_s = 1800`` (None: no limit): six full-length replies; a normal
      episode needs a few short ones, so this only ends episodes that are stuck;
    * ``preflight_timeout_s = 60``: a 1-token request needs no long generation; a server
      still loading its model fails the preflight with a clear message instead of stalling;
    * ``breaker_failures = 8``: more than one request's whole retry budget (``max_retries``
      4 = 5 attempts), so one flaky request costs only its episode, while an endpoint that
      stays down stops the run during the next request;
    * ``max_reply_chars = 262144`` (256 Ki characters): far above any real answer or tool
      call (``max_tokens`` 8192 is ~40 K characters), small enough to store;
    * ``busy_wait_s = 300``: after a timed-out request, how long the client waits for the server
      to answer ``GET /models`` before it counts it down. A server that serves one request at a time
      answers only once the generation the client gave up on ends, and llama-cpp-python with tools
      offered ignores ``max_tokens`` (an 8192-token context at ~25 tokens/s on a CPU: ~330 s).

    ``api_key`` is the resolved secret: ``repr()`` masks it, :meth:`redacted` omits it.
    """

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.1
    max_tokens: int = 8192
    max_steps: int = 10
    timeout_s: float = 300.0
    connect_timeout_s: float = 10.0
    episode_timeout_s: float | None = 1800.0
    preflight_timeout_s: float = 60.0
    busy_wait_s: float = 300.0
    max_retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    breaker_failures: int = 8
    max_reply_chars: int = 262_144
    language: str = "zh"
    tool_mode: str = "native"
    tool_choice: str = "auto"
    structured_output: str = "none"
    role_models: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = []
        if self.language not in LANGUAGES:
            problems.append(f"language must be one of {LANGUAGES}, got {self.language!r}")
        if self.tool_mode not in TOOL_MODES:
            problems.append(f"tool_mode must be one of {TOOL_MODES}, got {self.tool_mode!r} "
                            "(use 'json' for servers without function calling)")
        if self.tool_choice not in TOOL_CHOICES:
            problems.append(f"tool_choice must be one of {TOOL_CHOICES}, got {self.tool_choice!r}")
        if self.structured_output not in STRUCTURED_OUTPUTS:
            problems.append(f"structured_output must be one of {STRUCTURED_OUTPUTS}, got {self.structured_output!r}")
        if not (isinstance(self.temperature, (int, float)) and 0 <= self.temperature <= 2):
            problems.append(f"temperature must be a number in [0, 2], got {self.temperature!r}")
        for name in ("max_tokens", "max_steps", "breaker_failures", "max_reply_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.max_retries, int) or isinstance(self.max_retries, bool) or self.max_retries < 0:
            problems.append(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        for name in ("timeout_s", "connect_timeout_s", "preflight_timeout_s", "episode_timeout_s", "busy_wait_s"):
            value = getattr(self, name)
            if name == "episode_timeout_s" and value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                problems.append(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("backoff_s", "backoff_max_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                problems.append(f"{name} must be a number of seconds >= 0, got {value!r}")
        for name in ("model", "base_url", "api_key"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                problems.append(f"{name} must be a string, got {type(value).__name__}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            problems.append(f"seed must be an integer or None, got {self.seed!r}")
        if not isinstance(self.extra_body, dict):
            problems.append(f"extra_body must be a table/dict of extra request fields, got {self.extra_body!r}")
        unknown_roles = sorted(set(self.role_models) - set(ROLES))
        if unknown_roles:
            problems.append(f"role_models has unknown role(s) {unknown_roles}; roles are {ROLES}")
        if problems:
            raise ConfigError("invalid LLM configuration: " + "; ".join(problems))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.redacted().items())
        return f"LLMConfig({shown})"

    def redacted(self) -> dict[str, Any]:
        """Every field, with ``api_key`` masked (``'***'`` or None): safe for logs and run.json."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["api_key"] = "***" if self.api_key else None
        return values

    @property
    def max_body_bytes(self) -> int:
        """The most bytes of one HTTP reply body the client reads (a char is at most 6 JSON bytes)."""
        return 8 * self.max_reply_chars + _BODY_SLACK_BYTES

    def model_for(self, role: str) -> str | None:
        """The model a role talks to: its override, else ``model``."""
        return self.role_models.get(role) or self.model

    def models_label(self, roles: tuple[str, ...]) -> str | None:
        """``"m"`` when every role uses one model, else ``"planner=a,worker=b,..."``."""
        return models_label({role: self.model_for(role) for role in roles})

    @classmethod
    def from_sources(cls, args: Any = None, models_file: str | os.PathLike | None = None,
                     preset: str | None = None, environ: Mapping[str, str] | None = None) -> "LLMConfig":
        """Assemble a config; later sources override earlier ones.

        1. defaults (see the class docstring);
        2. environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``;
        3. the preset ``preset`` of the TOML ``models_file`` (or its ``default = "name"``);
           its key comes from ``api_key_env`` (a variable name) or ``api_key_file`` (a path,
           relative to the models file); an ``api_key`` written in the file is refused;
        4. ``args`` (an ``argparse.Namespace`` or a mapping): every attribute that is not
           None among ``model, base_url, temperature, max_tokens, max_steps, timeout_s (or
           timeout), connect_timeout_s, episode_timeout_s (or episode_timeout),
           preflight_timeout_s, max_retries, backoff_s, breaker_failures, max_reply_chars,
           language, tool_mode, tool_choice, structured_output, seed``, ``planner_model, worker_model,
           reporter_model, react_model``, and the key: ``api_key_env`` (a variable name),
           ``api_key_file`` (a path) or ``api_key`` (the key itself: visible in the process
           list when it came from a command line, so prefer the other two).

        Raises ``ConfigError`` for a missing file, unknown preset or key, or bad value.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for key, var in (("base_url", "OPENAI_BASE_URL"), ("api_key", "OPENAI_API_KEY"), ("model", "OPENAI_MODEL")):
            if environ.get(var):
                values[key] = environ[var]
        if preset is not None and models_file is None:
            raise ConfigError(f"preset {preset!r} given without a models file; pass --models-file FILE.toml")
        if models_file is not None:
            values.update(load_preset(models_file, preset, environ))
        values.update(_values_from_args(args, environ))
        role_models = dict(values.pop("role_models", {}))
        role_models.update(values.pop("_arg_roles", {}))
        return cls(**values, role_models=role_models)


def models_label(model_of_role: Mapping[str, str | None]) -> str | None:
    """One name when all roles share a model, else ``"role=model,..."`` (for result records)."""
    if len(set(model_of_role.values())) <= 1:
        return next(iter(model_of_role.values()), None)
    return ",".join(f"{role}={model}" for role, model in model_of_role.items())


_FIELD_NAMES = {f.name for f in fields(LLMConfig)}
_PRESET_KEYS = (_FIELD_NAMES - {"role_models", "api_key"}) | {"roles", "api_key_env", "api_key_file", "description"}
_ARG_KEYS = ("model", "base_url", "temperature", "max_tokens", "max_steps", "timeout_s", "connect_timeout_s",
             "episode_timeout_s", "preflight_timeout_s", "busy_wait_s", "max_retries", "backoff_s", "breaker_failures",
             "max_reply_chars", "language", "tool_mode", "tool_choice", "structured_output", "seed")


def load_preset(models_file: str | os.PathLike, preset: str | None,
                environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The config values of one preset of a TOML models file (see module docstring)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as exc:
            raise ConfigError("reading a TOML models file on Python 3.10 needs `pip install tomli`") from exc
    path = Path(models_file)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: models file not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    presets = document.get("presets")
    if not isinstance(presets, dict) or not presets:
        raise ConfigError(f"{path}: no [presets.NAME] tables; see agents/llm/config.py for the format")
    name = preset or document.get("default")
    if name is None:
        if len(presets) != 1:
            raise ConfigError(f"{path}: several presets ({', '.join(presets)}); choose one with --preset "
                              "or set default = \"NAME\"")
        name = next(iter(presets))
    if name not in presets:
        raise ConfigError(f"{path}: unknown preset {name!r}; available: {', '.join(presets)}")
    table = dict(presets[name])
    if "api_key" in table:
        raise ConfigError(f"{path}: preset {name!r} writes its API key into the models file; keep the key out "
                          "of it: api_key_env = \"VAR\" (an environment variable) or api_key_file = \"PATH\"")
    unknown = sorted(set(table) - _PRESET_KEYS)
    if unknown:
        raise ConfigError(f"{path}: preset {name!r} has unknown key(s) {unknown}; allowed: {sorted(_PRESET_KEYS)}")
    table.pop("description", None)
    roles = table.pop("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
        raise ConfigError(f"{path}: preset {name!r}: [roles] must map role names to model names")
    key = _key_from(table.pop("api_key_env", None), table.pop("api_key_file", None),
                    os.environ if environ is None else environ, where=f"{path}: preset {name!r}",
                    relative_to=path.parent)
    if key is not None:
        table["api_key"] = key
    if roles:
        table["role_models"] = roles
    return table


def read_key_file(path: str | os.PathLike) -> str:
    """The API key stored in ``path`` (surrounding whitespace dropped); ConfigError if unusable."""
    path = Path(path).expanduser()
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: API key file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the API key file ({type(exc).__name__})") from exc
    if not key or "\n" in key:
        raise ConfigError(f"{path}: an API key file must hold exactly one non-empty line")
    return key


def _key_from(variable: Any, key_file: Any, environ: Mapping[str, str], *, where: str,
              relative_to: Path | None = None) -> str | None:
    if variable is not None and key_file is not None:
        raise ConfigError(f"{where}: give api_key_env or api_key_file, not both")
    if variable is not None:
        if not isinstance(variable, str) or not variable:
            raise ConfigError(f"{where}: api_key_env must name an environment variable, got {variable!r}")
        if not environ.get(variable):
            raise ConfigError(f"{where}: reads its API key from ${variable}, which is not set")
        return environ[variable]
    if key_file is not None:
        if not isinstance(key_file, (str, os.PathLike)) or not str(key_file):
            raise ConfigError(f"{where}: api_key_file must be a path, got {key_file!r}")
        path = Path(key_file).expanduser()
        if relative_to is not None and not path.is_absolute():
            path = relative_to / path
        return read_key_file(path)
    return None


def _values_from_args(args: Any, environ: Mapping[str, str]) -> dict[str, Any]:
    if args is None:
        return {}
    get = args.get if isinstance(args, Mapping) else (lambda key: getattr(args, key, None))
    values: dict[str, Any] = {}
    for key in _ARG_KEYS:
        value = get(key)
        if value is not None:
            values[key] = value
    aliases = (("timeout_s", "timeout"), ("episode_timeout_s", "episode_timeout"), ("busy_wait_s", "busy_wait"))
    for key, alias in aliases:
        if values.get(key) is None and get(alias) is not None:
            values[key] = get(alias)
    api_key = _key_from(get("api_key_env"), get("api_key_file"), environ, where="command line")
    if api_key is None and get("api_key") is not None:
        api_key = get("api_key")
    if api_key is not None:
        values["api_key"] = api_key
    roles = {role: get(f"{role}_model") for role in ROLES if get(f"{role}_model")}
    if roles:
        values["_arg_roles"] = roles
    return values
