import { render } from 'preact';
import { AdminApp } from './app.js';
import './admin.css';

render(<AdminApp />, document.getElementById('admin')!);
