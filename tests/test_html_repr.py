"""The HTML representation of every estimator links to its API page."""

import re

import numpy as np
import pytest
from _instances import all_estimators
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_html_repr

import sklearn_budget

BASE = "https://sklearn-budget.readthedocs.io/en/latest"
ALL = all_estimators()


def _links(html):
    return re.findall(r'href="([^"]+)"', html)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_html_repr_links_to_the_api_page(cls):
    url = f"{BASE}/api/generated/sklearn_budget.{cls.__name__}.html"
    estimator = cls()
    assert estimator._get_doc_link() == url
    assert url in _links(estimator._repr_html_())
    assert url in _links(estimator_html_repr(estimator))


def test_html_repr_links_inside_a_pipeline_and_once_fitted():
    X = np.random.RandomState(0).randn(60, 3)
    y = X[:, 0] > 0
    pipe = make_pipeline(StandardScaler(), sklearn_budget.Forgetron(budget=10)).fit(X, y)
    links = _links(estimator_html_repr(pipe))
    assert f"{BASE}/api/generated/sklearn_budget.Forgetron.html" in links
    # scikit-learn's own steps keep their links to scikit-learn's site.
    assert any("scikit-learn.org" in link and "StandardScaler" in link for link in links)
