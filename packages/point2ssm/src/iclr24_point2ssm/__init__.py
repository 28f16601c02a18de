"""Point2SSM (Adams & Elhabian, ICLR 2024, arXiv 2305.14486): statistical shape models
learned directly from point clouds, with its baselines and the ShapeWorks metrics.

Importing the package needs neither open3d nor matplotlib: the mesh functions import open3d
when first called (a missing open3d or libusb is a one-line MissingDependencyError)."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import CPAE, AutoEncoder, AutoEncoderConfig, CPAEConfig, no_correspondence
from .data import (
    Perturbation,
    Population,
    PopulationConfig,
    draw_inputs,
    load_mesh_split,
    make_population,
    read_mesh,
    read_vtk_polydata,
)
from .point2ssm import (
    DGCNNEncoder,
    EdgeConv,
    EncoderConfig,
    Point2SSM,
    Point2SSMConfig,
    PointNetEncoder,
    chamfer_distance,
    knn_indices,
    mapping_loss,
)
from .shape_model import (
    ShapeModel,
    compactness,
    generalization,
    mode_r2,
    mode_recovery,
    pca,
    point_to_surface,
    specificity,
)

__version__ = "0.1.0"

__all__ = [
    "CPAE",
    "AutoEncoder",
    "AutoEncoderConfig",
    "CPAEConfig",
    "DGCNNEncoder",
    "EdgeConv",
    "EncoderConfig",
    "Perturbation",
    "Point2SSM",
    "Point2SSMConfig",
    "PointNetEncoder",
    "Population",
    "PopulationConfig",
    "ShapeModel",
    "chamfer_distance",
    "compactness",
    "draw_inputs",
    "generalization",
    "knn_indices",
    "load_mesh_split",
    "make_population",
    "mapping_loss",
    "mode_r2",
    "mode_recovery",
    "no_correspondence",
    "pca",
    "point_to_surface",
    "read_mesh",
    "read_vtk_polydata",
    "specificity",
]
