// What every entry exports besides the API built over its own loader.
export {
  SessionError,
  SessionQueryError,
  SessionReferenceError,
  SessionLoadError,
  SessionArgumentError,
  SessionInternalError,
} from './errors.js';
