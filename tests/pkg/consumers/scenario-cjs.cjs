// `require` consumer: node scenario-cjs.cjs <input>.
const api = require('dsh-session-search');

(async () => {
  const { readInputs } = await import('./inputs.mjs');
  const { runScenario } = await import('./scenario.mjs');
  const calls = await runScenario(api, readInputs(process.argv[2]));
  process.stdout.write(JSON.stringify(calls) + '\n');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
