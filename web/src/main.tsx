// The console's entry: styles, then the app into #app (replacing the boot message).
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
