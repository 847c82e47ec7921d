// The package's error classes, and the one place a raw failure from the wasm module becomes one
// of them: by the stable code's prefix. Nothing else ever reaches a caller.

export class SessionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
  }
}

export class SessionQueryError extends SessionError {}
export class SessionReferenceError extends SessionError {}
export class SessionLoadError extends SessionError {}
export class SessionArgumentError extends SessionError {}
export class SessionInternalError extends SessionError {}

// `name` on the prototype (as built-in errors have it) survives minifiers that rename classes.
for (const [cls, name] of [
  [SessionError, 'SessionError'],
  [SessionQueryError, 'SessionQueryError'],
  [SessionReferenceError, 'SessionReferenceError'],
  [SessionLoadError, 'SessionLoadError'],
  [SessionArgumentError, 'SessionArgumentError'],
  [SessionInternalError, 'SessionInternalError'],
]) {
  Object.defineProperty(cls.prototype, 'name', { value: name, writable: true, configurable: true });
}

const CLASS_BY_NAME = {
  SessionQueryError,
  SessionReferenceError,
  SessionLoadError,
  SessionArgumentError,
  SessionInternalError,
};

/** The error class a stable code belongs to. */
export function classForCode(code) {
  if (code.startsWith('SESSION_QUERY_')) return SessionQueryError;
  if (code.startsWith('SESSION_REFERENCE_')) return SessionReferenceError;
  if (code.startsWith('SESSION_LOAD_')) return SessionLoadError;
  if (code === 'SESSION_INTERNAL') return SessionInternalError;
  return SessionArgumentError;
}

export function sessionError(code, message, options) {
  const cls = classForCode(code);
  return new cls(code, message, options);
}

export function argumentError(message) {
  return new SessionArgumentError('SESSION_INVALID_ARGUMENT', message);
}

/** A coded error thrown by the raw module, as the package's class; `null` when it is not one. */
export function fromRaw(error) {
  const code = error !== null && typeof error === 'object' ? error.code : undefined;
  if (typeof code !== 'string' || !code.startsWith('SESSION_')) return null;
  const message = typeof error.message === 'string' ? error.message : String(error);
  // The raw face's protocol errors (a malformed params array) are argument errors to us.
  const stable = code.startsWith('SESSION_RPC_') ? 'SESSION_INVALID_ARGUMENT' : code;
  return sessionError(stable, message);
}

/** A plain object that survives structured clone (postMessage), and its inverse. */
export function toTransferable(error) {
  if (error instanceof SessionError) {
    return { name: error.name, code: error.code, message: error.message };
  }
  return { name: 'SessionInternalError', code: 'SESSION_INTERNAL', message: String(error && error.message || error) };
}

export function fromTransferable(data) {
  const cls = CLASS_BY_NAME[data.name] || classForCode(data.code);
  return new cls(data.code, data.message);
}
