// The benchmark's worker: the package's own worker script (`dsh-session-search/worker-script`),
// preceded by the memory probe of web/capture.js. Module imports evaluate in order.
import './capture.js';
import '/app/node_modules/dsh-session-search/worker/worker.js';
